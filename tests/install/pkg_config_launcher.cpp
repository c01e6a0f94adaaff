// Built with nothing but `pkg-config --cflags --libs tiletune-launcher`: the
// launcher's installed headers compile and its static libraries link, with
// what they link (the runtime's, libsodium, spdlog). Nothing listens at the
// address, so the key resolves to "not handled".
#include "client/launcher/kernel_launcher.h"

int main() {
  tiletune::launcher::KernelLauncher launcher("127.0.0.1:1");
  tiletune::v1::DeviceSelector cpu;
  cpu.set_device("cpu:0");
  const auto handle = launcher.Resolve(tiletune::v1::KernelKey(), cpu);
  return handle->runner() == tiletune::launcher::Runner::kNotHandled ? 0 : 1;
}
