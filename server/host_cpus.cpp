#include "server/host_cpus.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

namespace tiletune::server {

std::optional<std::string> KeepFirstCpus(int count) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    return std::string("host_cpus: cannot read the CPUs allowed: ") + std::strerror(errno);
  }
  if (count > CPU_COUNT(&allowed)) {
    return "host_cpus: " + std::to_string(count) + " CPUs asked for, " +
           std::to_string(CPU_COUNT(&allowed)) + " allowed";
  }
  cpu_set_t kept;
  CPU_ZERO(&kept);
  for (int cpu = 0, taken = 0; cpu < CPU_SETSIZE && taken < count; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    CPU_SET(cpu, &kept);
    ++taken;
  }
  if (sched_setaffinity(0, sizeof(kept), &kept) != 0) {
    return std::string("host_cpus: cannot restrict the daemon's CPUs: ") + std::strerror(errno);
  }
  return std::nullopt;
}

}  // namespace tiletune::server
