// Built with nothing but `pkg-config --cflags --libs tiletune`: the installed
// headers compile and the installed static libraries link.
#include "client/tiletune_client.h"
#include "ops/softmax/softmax_args.h"

int main(int argc, char** argv) {
  tiletune::client::TiletuneClient client(argc > 1 ? argv[1] : "127.0.0.1:7733");
  return sizeof(tt_softmax_args) > 0 && !client.address().empty() ? 0 : 1;
}
