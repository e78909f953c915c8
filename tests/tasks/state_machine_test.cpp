#include "a2ad/tasks/state_machine.hpp"

#include <gtest/gtest.h>

namespace a2ad::tasks {
namespace {
using S = protocol::TaskState;

TEST(StateMachine, TransitionTable) {
  const S all[] = {S::kUnspecified, S::kSubmitted,     S::kWorking,  S::kCompleted,   S::kFailed,
                   S::kCanceled,    S::kInputRequired, S::kRejected, S::kAuthRequired};
  for (S from : all) {
    for (S to : all) {
      bool expected = !protocol::IsTerminal(from) && from != S::kUnspecified &&
                      to != S::kSubmitted && to != S::kUnspecified;
      EXPECT_EQ(CanTransition(from, to), expected)
          << static_cast<int>(from) << " -> " << static_cast<int>(to);
    }
  }
}

TEST(StateMachine, NamedCases) {
  EXPECT_TRUE(CanTransition(S::kSubmitted, S::kWorking));
  EXPECT_TRUE(CanTransition(S::kWorking, S::kInputRequired));
  EXPECT_TRUE(CanTransition(S::kInputRequired, S::kWorking));
  EXPECT_TRUE(CanTransition(S::kInputRequired, S::kCanceled));
  EXPECT_TRUE(CanTransition(S::kSubmitted, S::kRejected));
  EXPECT_TRUE(CanTransition(S::kWorking, S::kWorking));
  EXPECT_FALSE(CanTransition(S::kCompleted, S::kWorking));
  EXPECT_FALSE(CanTransition(S::kCanceled, S::kCanceled));
  EXPECT_FALSE(CanTransition(S::kFailed, S::kCompleted));
  EXPECT_FALSE(CanTransition(S::kWorking, S::kSubmitted));
}

TEST(StateMachine, TerminalAndInterrupted) {
  for (S s : {S::kCompleted, S::kFailed, S::kCanceled, S::kRejected})
    EXPECT_TRUE(protocol::IsTerminal(s));
  for (S s : {S::kSubmitted, S::kWorking, S::kInputRequired, S::kAuthRequired, S::kUnspecified})
    EXPECT_FALSE(protocol::IsTerminal(s));
  EXPECT_TRUE(protocol::IsInterrupted(S::kInputRequired));
  EXPECT_TRUE(protocol::IsInterrupted(S::kAuthRequired));
  EXPECT_FALSE(protocol::IsInterrupted(S::kWorking));
}

}  // namespace
}  // namespace a2ad::tasks
