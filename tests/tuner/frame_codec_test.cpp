#include "tuner/worker/frame_codec.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "tiletune/worker/v1/worker.pb.h"

namespace tiletune::tuner {
namespace {

TEST(FrameCodec, RoundTripsMessagesSplitAnywhere) {
  worker::v1::BenchRequest a, b;
  a.set_entry("first");
  a.set_seed(7);
  b.set_artifact_path(std::string(300, 'p'));
  const std::string stream = EncodeFrame(a) + EncodeFrame(b);
  ASSERT_EQ(stream.substr(0, 4), std::string("\x09\x00\x00\x00", 4));  // little-endian length
  for (size_t chunk : {1, 3, 4, 5, 17, 1000}) {
    FrameReader reader;
    std::vector<std::string> frames;
    for (size_t i = 0; i < stream.size(); i += chunk) {
      reader.Append(stream.data() + i, std::min(chunk, stream.size() - i));
      while (auto f = reader.Next()) frames.push_back(*f);
    }
    ASSERT_EQ(frames.size(), 2u) << "chunk " << chunk;
    worker::v1::BenchRequest got;
    ASSERT_TRUE(got.ParseFromString(frames[1]));
    EXPECT_EQ(got.artifact_path(), b.artifact_path());
    ASSERT_TRUE(got.ParseFromString(frames[0]));
    EXPECT_EQ(got.entry(), "first");
  }
}

TEST(FrameCodec, RejectsAnOversizedLength) {
  FrameReader reader;
  reader.Append("\xff\xff\xff\x7f", 4);
  EXPECT_THROW(reader.Next(), std::runtime_error);
}

TEST(FrameCodec, WriteAllReportsAClosedReader) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  ::signal(SIGPIPE, SIG_IGN);
  EXPECT_EQ(WriteAll(fds[1], "data", [] { return true; }), WriteOutcome::kBroken);
  ::close(fds[1]);
}

}  // namespace
}  // namespace tiletune::tuner
