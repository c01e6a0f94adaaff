// Fleet claims on PostgreSQL: a claim is a lease held by one daemon (an
// owner id) and renewed by its heartbeat; an item whose lease ran out is
// claimed again elsewhere, and the old holder's writes are refused, so no
// item completes twice. Two stores stand for two daemons.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "db/tuning_store.h"
#include "store_test.h"
#include "tests/support/poll_until.h"

namespace tiletune::db {
namespace {

using namespace std::chrono_literals;

class PostgresLeases : public PostgresStoreTest {
 protected:
  std::unique_ptr<TuningStore> Daemon(const std::string& owner, int lease_seconds = 30) {
    PostgresOptions options;
    options.url = database_->url();
    options.owner = owner;
    options.lease_seconds = lease_seconds;
    return OpenPostgresStore(options);
  }

  void CreateJob(TuningStore& store, const std::string& id, int items) {
    v1::Job job;
    job.set_id(id);
    job.set_device("cls-a");
    std::vector<std::string> keys;
    for (int i = 0; i < items; ++i) {
      job.mutable_spec()->add_kernels()->set_op("softmax");
      keys.push_back(id + "/" + std::to_string(i));
    }
    store.CreateJob(job, keys);
  }

  // Every lease runs out now, as if its daemon had died long ago.
  void ExpireLeases() { Query("UPDATE job_items SET lease_expires_us = 0"); }
};

v1::JobItemProgress Finished(int index, int compiled) {
  v1::JobItemProgress progress;
  progress.set_index(index);
  progress.set_state(v1::JOB_SUCCEEDED);
  progress.set_compiled(compiled);
  return progress;
}

TEST_F(PostgresLeases, AnItemWhoseLeaseRanOutIsTakenOverAndTheOldHolderIsFenced) {
  // Between a beat and b's claim right after it there is far less than a
  // lease, even on a loaded machine.
  auto a = Daemon("daemon-a", 3);
  auto b = Daemon("daemon-b", 3);
  CreateJob(*a, "j1", 1);
  auto held = a->ClaimNextItem("cls-a");
  ASSERT_TRUE(held);
  EXPECT_NE(held->lease, kUnleased);
  EXPECT_EQ(Query("SELECT owner FROM job_items"), "daemon-a");

  // While a renews, past its first lease, b finds nothing; once a stops,
  // the lease runs out.
  for (int beat = 0; beat < 4; ++beat) {
    EXPECT_TRUE(a->RenewLease("j1", 0, held->lease));
    EXPECT_FALSE(b->ClaimNextItem("cls-a")) << "beat " << beat;
    std::this_thread::sleep_for(1s);
  }
  std::optional<JobItemClaim> taken;
  testing::PollUntil([&] { return (taken = b->ClaimNextItem("cls-a")).has_value(); },
                     testing::In(testing::kEventCeiling), 100ms);
  ASSERT_TRUE(taken) << "the lease never ran out";
  EXPECT_EQ(taken->job_id, "j1");
  EXPECT_NE(taken->lease, held->lease);
  EXPECT_EQ(Query("SELECT owner FROM job_items"), "daemon-b");

  // a wakes up: its heartbeat and its writes are refused.
  EXPECT_FALSE(a->RenewLease("j1", 0, held->lease));
  EXPECT_THROW(a->UpdateItem("j1", Finished(0, 1), held->lease), LeaseLost);
  EXPECT_EQ(a->GetJob("j1")->items(0).state(), v1::JOB_RUNNING);
  b->UpdateItem("j1", Finished(0, 2), taken->lease);
  EXPECT_THROW(a->UpdateItem("j1", Finished(0, 1), held->lease), LeaseLost);
  auto item = b->GetJob("j1")->items(0);
  EXPECT_EQ(item.state(), v1::JOB_SUCCEEDED);
  EXPECT_EQ(item.compiled(), 2);
  // A finished item is never claimed again, whatever its lease says.
  ExpireLeases();
  EXPECT_FALSE(a->ClaimNextItem("cls-a"));
}

TEST_F(PostgresLeases, ARestartedDaemonRequeuesOnlyItsOwnItems) {
  auto a = Daemon("daemon-a");
  auto b = Daemon("daemon-b");
  CreateJob(*a, "j1", 3);
  ASSERT_TRUE(a->ClaimNextItem("cls-a"));
  ASSERT_TRUE(b->ClaimNextItem("cls-a"));
  a.reset();
  auto restarted = Daemon("daemon-a");
  EXPECT_EQ(restarted->RequeueInterrupted(), 1);
  auto job = restarted->GetJob("j1");
  EXPECT_EQ(job->items(0).state(), v1::JOB_QUEUED);
  EXPECT_EQ(job->items(1).state(), v1::JOB_RUNNING);
  EXPECT_EQ(restarted->ClaimNextItem("cls-a")->item_index, 0);
  EXPECT_EQ(restarted->ClaimNextItem("cls-a")->item_index, 2);
}

TEST_F(PostgresLeases, DaemonsRacingOverExpiredItemsCompleteEachExactlyOnce) {
  auto a = Daemon("daemon-a");
  auto b = Daemon("daemon-b");
  constexpr int kItems = 24;
  CreateJob(*a, "j1", kItems);
  // a claims everything, then stalls past its leases.
  std::vector<JobItemClaim> stale;
  while (auto claim = a->ClaimNextItem("cls-a")) stale.push_back(*claim);
  ASSERT_EQ(stale.size(), static_cast<std::size_t>(kItems));
  ExpireLeases();

  // Now a finishes its old claims while b takes the items over and
  // finishes them: every item must complete once, by one of them.
  std::mutex mutex;
  std::map<int, int> completions;
  int refused = 0;
  std::thread old_holder([&] {
    for (const auto& claim : stale) {
      try {
        a->UpdateItem("j1", Finished(claim.item_index, 1), claim.lease);
        std::lock_guard lock(mutex);
        ++completions[claim.item_index];
      } catch (const LeaseLost&) {
        std::lock_guard lock(mutex);
        ++refused;
      }
    }
  });
  std::thread new_holder([&] {
    while (auto claim = b->ClaimNextItem("cls-a")) {
      b->UpdateItem("j1", Finished(claim->item_index, 2), claim->lease);
      std::lock_guard lock(mutex);
      ++completions[claim->item_index];
    }
  });
  old_holder.join();
  new_holder.join();

  ASSERT_EQ(completions.size(), static_cast<std::size_t>(kItems));
  for (const auto& [index, count] : completions) EXPECT_EQ(count, 1) << "item " << index;
  int by_b = 0;
  auto job = b->GetJob("j1");
  ASSERT_TRUE(job);
  for (const auto& item : job->items()) {
    EXPECT_EQ(item.state(), v1::JOB_SUCCEEDED);
    by_b += item.compiled() == 2 ? 1 : 0;
  }
  EXPECT_EQ(by_b, refused);
}

// Daemons sharing the database submit at once: the caps hold fleet-wide,
// because each creation counts inside the transaction that inserts.
TEST_F(PostgresLeases, JobCapsHoldWhenDaemonsCreateAtOnce) {
  auto a = Daemon("daemon-a");
  auto b = Daemon("daemon-b");
  constexpr int kPerDaemon = 20;
  constexpr int64_t kCap = 7;
  std::atomic<int> created{0}, refused{0}, reused{0};
  auto submit = [&](TuningStore& store, const std::string& prefix) {
    for (int i = 0; i < kPerDaemon; ++i) {
      v1::Job job;
      job.set_id(prefix + std::to_string(i));
      job.set_device("cls-a");
      job.set_submitted_by("alice");
      job.mutable_spec()->add_kernels()->set_op("softmax");
      const auto result =
          store.CreateJob(job, {job.id() + "/0"}, JobAdmission{.max_active_submitted = kCap});
      (result.outcome == JobAdmissionResult::Outcome::kCreated ? created : refused)++;
      // One key for all: whoever creates first, the others reuse its job.
      v1::Job same = job;
      same.set_id(prefix + "same" + std::to_string(i));
      same.set_submitted_by("");
      if (store.CreateJob(same, {"the-key"}, JobAdmission{.reuse_active_for_key = true}).outcome ==
          JobAdmissionResult::Outcome::kReused) {
        ++reused;
      }
    }
  };
  std::thread on_a([&] { submit(*a, "a"); });
  std::thread on_b([&] { submit(*b, "b"); });
  on_a.join();
  on_b.join();
  EXPECT_EQ(created.load(), kCap);
  EXPECT_EQ(refused.load(), 2 * kPerDaemon - kCap);
  EXPECT_EQ(Query("SELECT count(*) FROM jobs WHERE submitted_by = 'alice'"), "7");
  EXPECT_EQ(reused.load(), 2 * kPerDaemon - 1);
  EXPECT_EQ(Query("SELECT count(*) FROM job_items WHERE canonical_key = 'the-key'"), "1");
}

}  // namespace
}  // namespace tiletune::db
