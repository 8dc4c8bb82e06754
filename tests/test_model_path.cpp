// Where a GGUF-backed program looks for its file without -m (engine/model/model_path.hpp).
#include <doctest/doctest.h>

#include <string>

#include "engine/error/error.hpp"
#include "engine/model/model_path.hpp"
#include "tests/support/temp_folder.hpp"

using kiln::resolve_model_path;
using kiln::test::TempFolder;

TEST_CASE("the variable, then the program's folder, then the build-time path") {
  TempFolder program("path-program"), elsewhere("path-elsewhere");
  const std::string beside = program.file("m.gguf"), built = elsewhere.file("built.gguf"),
                    named = elsewhere.file("named.gguf");
  for (const auto& f : {beside, built, named}) kiln::test::write_bytes(f, {1});

  CHECK(resolve_model_path(named.c_str(), program.path.string(), "m.gguf", built) == named);
  CHECK(resolve_model_path(nullptr, program.path.string(), "m.gguf", built) == beside);
  CHECK(resolve_model_path("", program.path.string(), "m.gguf", built) == beside);  // set but empty: unset
  CHECK(resolve_model_path(nullptr, elsewhere.path.string(), "m.gguf", built) == built);
  CHECK(resolve_model_path(nullptr, "", "m.gguf", built) == built);
}

TEST_CASE("one line when nothing is found, or the variable names no file") {
  TempFolder program("path-none");
  const std::string gone = program.file("gone.gguf");
  CHECK_THROWS_WITH_AS(resolve_model_path(nullptr, program.path.string(), "m.gguf", gone),
                       ("no model file: give one with -m FILE, set KILN_MODEL_PATH, or put m.gguf next to the program (in " +
                        program.path.string() + "); " + gone + ", the file it was compiled from, is not there either")
                           .c_str(),
                       kiln::Error);
  kiln::test::write_bytes(program.file("m.gguf"), {1});
  CHECK_THROWS_WITH_AS(resolve_model_path(gone.c_str(), program.path.string(), "m.gguf", gone),
                       ("KILN_MODEL_PATH names '" + gone + "', which is not a file").c_str(), kiln::Error);
  CHECK_THROWS_AS(resolve_model_path(program.path.c_str(), program.path.string(), "m.gguf", gone), kiln::Error);
}
