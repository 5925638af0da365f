// Matrices written to hurt the loader: alias bombs (billion laughs), deep nesting, enormous
// values, control characters. Each is refused quickly with a UserError (exit 2), never a
// crash, a hang or gigabytes of memory; the data-driven corpus in tests/data/bad-matrices
// checks the exact messages through the real binary.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "support.h"

namespace fabuild {
namespace {

using test::error_of;
using test::kBase;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

// Nine anchors, each a list of nine aliases of the one before: 9^9 (387 million) leaves if
// anything expanded them.
std::string billion_laughs(const std::string& where) {
  std::string text = "x: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    text += "x" + std::to_string(i) + ": &l" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 9; ++k) text += ", " + prev;
    text += "]\n";
  }
  return text + where;
}

template <class F>
std::chrono::milliseconds timed(F&& f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

TEST(HostileYaml, BillionLaughsIsRefusedAtOnce) {
  test::ErrorText e;
  const auto took = timed([&] { e = error_of(billion_laughs("")); });
  EXPECT_EQ(e.code, kExitBadConfig);
  EXPECT_THAT(e.message, HasSubstr("unknown key 'x'"));
  EXPECT_LT(took, std::chrono::seconds(2));
}

// The bomb where values are read: an axis, the command, an include list, an env value.
TEST(HostileYaml, AliasBombsInEveryValueArePlainShapeErrors) {
  const std::string anchors = [] {
    std::string text = "env: {A: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]}\n";
    return text;
  }();
  for (const char* use : {"python: *l0\n", "command: [sh, *l0]\n", "include: [*l0, *l0]\n"}) {
    SCOPED_TRACE(use);
    test::ErrorText e;
    const auto took = timed([&] {
      e = error_of(std::string("versions: [\"2.8.3\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n") +
                   anchors + use);
    });
    EXPECT_EQ(e.code, kExitBadConfig);
    EXPECT_LT(took, std::chrono::seconds(2));
  }
}

TEST(HostileYaml, DeepNestingIsASyntaxErrorNotAStackOverflow) {
  for (const int depth : {1000, 100000}) {
    SCOPED_TRACE(depth);
    const auto e = error_of("versions: " + std::string(depth, '[') + std::string(depth, ']') + "\n");
    EXPECT_EQ(e.code, kExitBadConfig);
  }
  const auto maps = error_of([] {
    std::string text = "build:\n";
    for (int i = 0; i < 50000; ++i) text += std::string(1 + i % 40, ' ') + "k" + std::to_string(i) + ":\n";
    return text;
  }());
  EXPECT_EQ(maps.code, kExitBadConfig);
}

// Megabyte values where the loader checks them with regular expressions (libstdc++'s
// std::regex recurses per character and would overflow the stack).
TEST(HostileYaml, MegabyteValuesAreRefusedNotACrash) {
  const std::string huge_version = "1" + [] {
    std::string s;
    for (int i = 0; i < 300000; ++i) s += ".1";
    return s;
  }();
  const std::string huge_name(2'000'000, 'A');
  for (const std::string& yaml :
       {std::string("versions: [\"") + huge_version + "\"]\ntorch: [\"2.8\"]\ncuda: [\"12.8\"]\npython: [cp312]\n",
        std::string(kBase) + "env: {" + huge_name + ": x}\n",
        std::string(kBase) + "torch: [\"2." + std::string(1'000'000, '8') + "\"]\n",
        std::string(kBase) + "build: {timeout: \"" + std::string(1'000'000, '9') + "s\"}\n",
        std::string(kBase) + "archs: \"" + std::string(1'000'000, '9') + "\"\n"}) {
    const auto e = error_of(yaml);
    EXPECT_EQ(e.code, kExitBadConfig) << e.message.substr(0, 200);
  }
}

TEST(HostileYaml, ControlCharactersInValuesNeverReachTheTerminalRaw) {
  const auto e = error_of(std::string(kBase) + "platform: [\"linux\\e]0;owned\\a\\nfabuild: all ok\"]\n");
  EXPECT_EQ(e.code, kExitBadConfig);
  EXPECT_EQ(e.message.find('\x1b'), std::string::npos) << "an escape sequence is printed as it is";
  EXPECT_EQ(e.message.find('\n'), std::string::npos) << "a value can forge a line of output";
}

}  // namespace
}  // namespace fabuild
