// A <name>-server for end-to-end tests: started by the test with its flags on
// a free loopback port (-t 1), its stderr kept in a file, stopped with SIGTERM
// at the end, which it must survive to exit with status 0; and plain JSON
// requests to it.
#pragma once

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <string>
#include <vector>

#include "tests/support/temp_folder.hpp"

namespace kiln::test {

class ServerProcess {
 public:
  ServerProcess(std::string binary, std::vector<std::string> args);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  httplib::Client client() const;  // 60 s read timeout
  std::string stderr_text() const;
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  static inline int count_ = 0;
  TempFolder log_;
  pid_t pid_ = 0;
  int port_ = 0;
};

struct Reply {
  int status = 0;
  nlohmann::json body;
};

Reply post(const ServerProcess& server, const std::string& path, const std::string& body,
           const httplib::Headers& headers = {});
Reply get(const ServerProcess& server, const std::string& path, const httplib::Headers& headers = {});
// The "data: ..." events of a stream (the body with "stream": true), up to
// and without "[DONE]", which must end it.
std::vector<nlohmann::json> stream_events(const ServerProcess& server, const std::string& path, nlohmann::json body);

}  // namespace kiln::test
