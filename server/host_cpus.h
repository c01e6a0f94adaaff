#pragma once

#include <optional>
#include <string>

namespace tiletune::server {

// Restricts the calling thread, and so every thread and child process it
// starts afterwards, to the first `count` CPUs it may run on now (config
// host_cpus). Call it before any other thread starts. An error naming
// host_cpus when fewer CPUs are allowed or the kernel refuses.
std::optional<std::string> KeepFirstCpus(int count);

}  // namespace tiletune::server
