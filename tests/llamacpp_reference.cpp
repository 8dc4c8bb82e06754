#include "tests/llamacpp_reference.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

namespace kiln::test {

namespace {

std::vector<int32_t> ints(std::istringstream& in) {
  std::vector<int32_t> v;
  for (int32_t x; in >> x;) v.push_back(x);
  return v;
}

}  // namespace

LlamaCppReference read_llamacpp_reference(const std::string& path) {
  std::ifstream file(path);
  REQUIRE_MESSAGE(file, "cannot read " << path);
  LlamaCppReference r;
  for (std::string line; std::getline(file, line);) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag == "PROMPT") {
      in >> tag >> tag;  // "n=16" "ids:"
      r.prompt = ints(in);
    } else if (tag == "LOGITS") {
      int pos = 0;
      in >> pos;
      std::vector<float> row;
      for (float x; in >> x;) row.push_back(x);
      r.logits.push_back(row);
    } else if (tag == "GEN") {
      r.gen_margins.push_back(std::stof(line.substr(line.find("margin=") + 7)));
      std::istringstream top5(line.substr(line.find("top5:") + 5));
      r.gen_top5.emplace_back();
      for (std::string item; top5 >> item;)
        r.gen_top5.back().emplace_back(std::stoi(item.substr(0, item.find(':'))), std::stof(item.substr(item.find(':') + 1)));
    } else if (tag == "GEN_IDS") {
      r.gen_ids = ints(in);
    }
  }
  INFO(path);
  REQUIRE(!r.prompt.empty());
  REQUIRE(r.logits.size() == r.prompt.size());
  for (const auto& row : r.logits) REQUIRE(row.size() == r.logits[0].size());
  REQUIRE(r.gen_margins.size() == r.gen_ids.size());
  REQUIRE(r.gen_top5.size() == r.gen_ids.size());
  for (const auto& top5 : r.gen_top5) REQUIRE(top5.size() == 5);
  return r;
}

}  // namespace kiln::test
