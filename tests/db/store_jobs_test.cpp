// The durable job queue: creation, claiming order, progress, cancellation
// and recovery after a restart.
#include <atomic>
#include <thread>
#include <vector>

#include "db/tuning_store.h"
#include "store_test.h"

namespace tiletune::db {
namespace {

// A job of `kernels` softmax items on `device`, created `created_s` seconds
// after the epoch. Item i has canonical key "<id>/i".
v1::Job Job(const std::string& id, const std::string& device, int priority, int64_t created_s,
            int kernels = 2) {
  v1::Job job;
  job.set_id(id);
  job.set_device(device);
  job.mutable_created_at()->set_seconds(created_s);
  job.mutable_spec()->set_name("job " + id);
  job.mutable_spec()->set_priority(priority);
  for (int i = 0; i < kernels; ++i) {
    auto* key = job.mutable_spec()->add_kernels();
    key->set_op("softmax");
    auto* rows = key->add_shape();
    rows->set_name("rows");
    rows->set_size(i + 1);
  }
  return job;
}

std::vector<std::string> Keys(const v1::Job& job) {
  std::vector<std::string> keys;
  for (int i = 0; i < job.spec().kernels_size(); ++i) {
    keys.push_back(job.id() + "/" + std::to_string(i));
  }
  return keys;
}

void Create(TuningStore& store, const v1::Job& job) {
  store.CreateJob(job, Keys(job));
}

// "job/item" of the next claim on `device`, or "none".
std::string Claim(TuningStore& store, const std::string& device) {
  auto claim = store.ClaimNextItem(device);
  if (!claim) return "none";
  return claim->job_id + "/" + std::to_string(claim->item_index);
}

class StoreJobs : public StoreTest {};

TEST_P(StoreJobs, CreatedJobComesBackWithItsItems) {
  auto store = Open();
  auto job = Job("j1", "cpu:0", 3, 1000, 3);
  Create(*store, job);
  auto got = store->GetJob("j1");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->state(), v1::JOB_QUEUED);
  EXPECT_EQ(got->device(), "cpu:0");
  EXPECT_EQ(got->created_at().seconds(), 1000);
  EXPECT_FALSE(got->has_started_at());
  EXPECT_EQ(got->spec().SerializeAsString(), job.spec().SerializeAsString());
  ASSERT_EQ(got->items_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got->items(i).index(), i);
    EXPECT_EQ(got->items(i).state(), v1::JOB_QUEUED);
    EXPECT_EQ(got->items(i).key().SerializeAsString(), job.spec().kernels(i).SerializeAsString());
  }
  EXPECT_FALSE(store->GetJob("j2"));
}

TEST_P(StoreJobs, CreateRefusesMismatchedKeysAndEmptyJobs) {
  auto store = Open();
  auto job = Job("j1", "cpu:0", 0, 1);
  EXPECT_THROW(store->CreateJob(job, {"only-one"}), std::invalid_argument);
  EXPECT_THROW(store->CreateJob(Job("j2", "cpu:0", 0, 1, 0), {}), std::invalid_argument);
  EXPECT_THROW(Create(*store, Job("j3", "", 0, 1)), std::invalid_argument);
  Create(*store, job);
  EXPECT_THROW(Create(*store, job), StoreError);
}

TEST_P(StoreJobs, ClaimsByPriorityThenAgeAndFinishesARunningJobFirst) {
  auto store = Open();
  Create(*store, Job("old-low", "cpu:0", 0, 100));
  Create(*store, Job("high", "cpu:0", 5, 300));
  Create(*store, Job("newer-high", "cpu:0", 5, 400));
  Create(*store, Job("other-device", "cpu:1", 9, 50));

  EXPECT_EQ(Claim(*store, "cpu:0"), "high/0");
  EXPECT_EQ(store->GetJob("high")->state(), v1::JOB_RUNNING);
  EXPECT_TRUE(store->GetJob("high")->has_started_at());
  // A more urgent job arriving later waits for the running one's items.
  Create(*store, Job("urgent", "cpu:0", 100, 500));
  EXPECT_EQ(Claim(*store, "cpu:0"), "high/1");
  // Every item of "high" is claimed: it no longer holds the device.
  EXPECT_EQ(Claim(*store, "cpu:0"), "urgent/0");
  EXPECT_EQ(Claim(*store, "cpu:0"), "urgent/1");
  EXPECT_EQ(Claim(*store, "cpu:0"), "newer-high/0");
  EXPECT_EQ(Claim(*store, "cpu:0"), "newer-high/1");
  EXPECT_EQ(Claim(*store, "cpu:0"), "old-low/0");
  EXPECT_EQ(Claim(*store, "cpu:0"), "old-low/1");
  EXPECT_EQ(Claim(*store, "cpu:0"), "none");
  EXPECT_EQ(Claim(*store, "cpu:1"), "other-device/0");
  EXPECT_EQ(Claim(*store, "gpu:7"), "none");
}

TEST_P(StoreJobs, EqualPriorityAndTimeClaimInCreationOrder) {
  auto store = Open();
  Create(*store, Job("b-first", "cpu:0", 1, 100, 1));
  Create(*store, Job("a-second", "cpu:0", 1, 100, 1));
  EXPECT_EQ(Claim(*store, "cpu:0"), "b-first/0");
  EXPECT_EQ(Claim(*store, "cpu:0"), "a-second/0");
}

TEST_P(StoreJobs, AmongEqualPrioritiesTheMostMissedJobRunsFirst) {
  auto store = Open();
  Create(*store, Job("old", "cpu:0", 0, 100, 1));
  Create(*store, Job("missed", "cpu:0", 0, 200, 1));
  Create(*store, Job("most-missed", "cpu:0", 0, 300, 1));
  Create(*store, Job("urgent", "cpu:0", 1, 400, 1));
  store->SetMissCounts({{"missed", 3}, {"most-missed", 40}, {"no-such-job", 9}});
  EXPECT_EQ(store->GetJob("most-missed")->miss_count(), 40);
  EXPECT_EQ(Claim(*store, "cpu:0"), "urgent/0");
  EXPECT_EQ(Claim(*store, "cpu:0"), "most-missed/0");
  EXPECT_EQ(Claim(*store, "cpu:0"), "missed/0");
  EXPECT_EQ(Claim(*store, "cpu:0"), "old/0");
}

using Outcome = JobAdmissionResult::Outcome;

TEST_P(StoreJobs, AdmissionCapsActiveJobsByName) {
  auto store = Open();
  const JobAdmission two_named{.max_active_named = 2};
  auto named = [](const std::string& id) {
    auto job = Job(id, "cpu:0", 0, 100, 1);
    job.mutable_spec()->set_name("tune-on-miss");
    return job;
  };
  EXPECT_EQ(store->CreateJob(named("a"), {"a/0"}, two_named).outcome, Outcome::kCreated);
  EXPECT_EQ(store->CreateJob(named("b"), {"b/0"}, two_named).outcome, Outcome::kCreated);
  Create(*store, Job("other", "cpu:0", 0, 100, 1));  // another name does not count
  const auto refused = store->CreateJob(named("c"), {"c/0"}, two_named);
  EXPECT_EQ(refused.outcome, Outcome::kTooManyNamed);
  EXPECT_EQ(refused.active, 2);
  EXPECT_FALSE(store->GetJob("c"));  // nothing written
  store->FinishJob("a", v1::JOB_SUCCEEDED, "");
  EXPECT_EQ(store->CreateJob(named("c"), {"c/0"}, two_named).outcome, Outcome::kCreated);
}

TEST_P(StoreJobs, AdmissionCapsActiveJobsInAllAndPerSubmitterAcrossReopening) {
  {
    auto store = Open();
    for (const char* id : {"a1", "a2", "a3"}) {
      auto job = Job(id, "cpu:0", 0, 100, 1);
      job.set_submitted_by("alice");
      Create(*store, job);
    }
    auto bobs = Job("b1", "cpu:0", 0, 100, 1);
    bobs.set_submitted_by("bob");
    Create(*store, bobs);
    Create(*store, Job("daemon", "cpu:0", 0, 100, 1));
    EXPECT_EQ(Claim(*store, "cpu:0"), "a1/0");  // RUNNING still counts
    store->FinishJob("a2", v1::JOB_SUCCEEDED, "");
  }
  auto store = Open();
  const JobAdmission caps{.max_active = 5, .max_active_submitted = 2};
  auto submitted = [](const std::string& id, const std::string& by) {
    auto job = Job(id, "cpu:0", 0, 200, 1);
    job.set_submitted_by(by);
    return job;
  };
  auto alice = store->CreateJob(submitted("a4", "alice"), {"a4/0"}, caps);
  EXPECT_EQ(alice.outcome, Outcome::kTooManySubmitted);
  EXPECT_EQ(alice.active, 2);
  EXPECT_EQ(store->GetJob("a1")->submitted_by(), "alice");
  EXPECT_EQ(store->GetJob("daemon")->submitted_by(), "");
  // bob has 1 of 2; the queue holds 4 of 5 active jobs.
  EXPECT_EQ(store->CreateJob(submitted("b2", "bob"), {"b2/0"}, caps).outcome, Outcome::kCreated);
  auto full = store->CreateJob(submitted("c1", "carol"), {"c1/0"}, caps);
  EXPECT_EQ(full.outcome, Outcome::kTooManyActive);
  EXPECT_EQ(full.active, 5);
  ASSERT_TRUE(store->CancelJob("a3"));
  EXPECT_EQ(store->CreateJob(submitted("a4", "alice"), {"a4/0"}, caps).outcome, Outcome::kCreated);
}

TEST_P(StoreJobs, ClaimCarriesTheKeyAndSpec) {
  auto store = Open();
  auto job = Job("j1", "cpu:0", 0, 1, 2);
  Create(*store, job);
  Claim(*store, "cpu:0");
  auto claim = store->ClaimNextItem("cpu:0");
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->item_index, 1);
  EXPECT_EQ(claim->key.SerializeAsString(), job.spec().kernels(1).SerializeAsString());
  EXPECT_EQ(claim->spec.name(), "job j1");
}

TEST_P(StoreJobs, ItemProgressIsSavedAndSurvivesReopening) {
  {
    auto store = Open();
    Create(*store, Job("j1", "cpu:0", 0, 1));
    Claim(*store, "cpu:0");
    v1::JobItemProgress progress;
    progress.set_index(0);
    progress.set_state(v1::JOB_SUCCEEDED);
    progress.set_compiled(12);
    progress.set_benchmarked(10);
    progress.set_best_us(3.5);
    (*progress.mutable_best_params())["block_m"] = 128;
    store->UpdateItem("j1", progress, kUnleased);
    progress.set_index(5);
    EXPECT_THROW(store->UpdateItem("j1", progress, kUnleased), std::invalid_argument);
  }
  auto item = Open()->GetJob("j1")->items(0);
  EXPECT_EQ(item.state(), v1::JOB_SUCCEEDED);
  EXPECT_EQ(item.compiled(), 12);
  EXPECT_EQ(item.benchmarked(), 10);
  EXPECT_EQ(item.best_us(), 3.5);
  EXPECT_EQ(item.best_params().at("block_m"), 128);
}

TEST_P(StoreJobs, CancelStopsAnUnfinishedJobOnce) {
  auto store = Open();
  Create(*store, Job("j1", "cpu:0", 0, 1, 3));
  Claim(*store, "cpu:0");
  v1::JobItemProgress done;
  done.set_index(0);
  done.set_state(v1::JOB_SUCCEEDED);
  store->UpdateItem("j1", done, kUnleased);
  Claim(*store, "cpu:0");

  EXPECT_TRUE(store->CancelJob("j1"));
  auto job = store->GetJob("j1");
  EXPECT_EQ(job->state(), v1::JOB_CANCELLED);
  EXPECT_TRUE(job->has_finished_at());
  EXPECT_EQ(job->items(0).state(), v1::JOB_SUCCEEDED);
  EXPECT_EQ(job->items(1).state(), v1::JOB_CANCELLED);
  EXPECT_EQ(job->items(2).state(), v1::JOB_CANCELLED);
  EXPECT_FALSE(store->CancelJob("j1"));
  EXPECT_FALSE(store->CancelJob("no-such-job"));
  EXPECT_EQ(Claim(*store, "cpu:0"), "none");

  // The worker still running item 1 reports late: its counters are kept,
  // the cancellation stands.
  v1::JobItemProgress late;
  late.set_index(1);
  late.set_state(v1::JOB_RUNNING);
  late.set_compiled(4);
  store->UpdateItem("j1", late, kUnleased);
  auto item = store->GetJob("j1")->items(1);
  EXPECT_EQ(item.state(), v1::JOB_CANCELLED);
  EXPECT_EQ(item.compiled(), 4);
}

TEST_P(StoreJobs, ALeaseRenewsWhileItsItemRunsAndNotAfter) {
  auto store = Open();
  Create(*store, Job("j1", "cpu:0", 0, 1, 2));
  auto first = store->ClaimNextItem("cpu:0");
  auto second = store->ClaimNextItem("cpu:0");
  ASSERT_TRUE(first && second);
  EXPECT_TRUE(store->RenewLease("j1", 0, first->lease));
  v1::JobItemProgress done;
  done.set_index(0);
  done.set_state(v1::JOB_SUCCEEDED);
  store->UpdateItem("j1", done, first->lease);
  EXPECT_FALSE(store->RenewLease("j1", 0, first->lease));
  EXPECT_TRUE(store->RenewLease("j1", 1, second->lease));
  store->CancelJob("j1");
  EXPECT_FALSE(store->RenewLease("j1", 1, second->lease));
  EXPECT_FALSE(store->RenewLease("j9", 0, first->lease));
}

TEST_P(StoreJobs, FinishRecordsTheOutcomeOnlyOnce) {
  auto store = Open();
  Create(*store, Job("j1", "cpu:0", 0, 1));
  Claim(*store, "cpu:0");
  EXPECT_TRUE(store->FinishJob("j1", v1::JOB_FAILED, "worker crashed 3 times"));
  auto job = store->GetJob("j1");
  EXPECT_EQ(job->state(), v1::JOB_FAILED);
  EXPECT_EQ(job->error(), "worker crashed 3 times");
  EXPECT_TRUE(job->has_finished_at());
  EXPECT_EQ(job->items(1).state(), v1::JOB_CANCELLED);
  EXPECT_FALSE(store->FinishJob("j1", v1::JOB_SUCCEEDED, ""));
  EXPECT_EQ(store->GetJob("j1")->state(), v1::JOB_FAILED);
  EXPECT_FALSE(store->FinishJob("no-such-job", v1::JOB_SUCCEEDED, ""));
  EXPECT_THROW(store->FinishJob("j1", v1::JOB_RUNNING, ""), std::invalid_argument);
}

TEST_P(StoreJobs, InterruptedItemsAreRequeuedAfterRestart) {
  {
    auto store = Open();
    Create(*store, Job("j1", "cpu:0", 0, 1, 2));
    Create(*store, Job("j2", "cpu:0", 9, 2, 1));
    Claim(*store, "cpu:0");  // j2/0
    v1::JobItemProgress done;
    done.set_index(0);
    done.set_state(v1::JOB_SUCCEEDED);
    store->UpdateItem("j2", done, kUnleased);
    store->FinishJob("j2", v1::JOB_SUCCEEDED, "");
    EXPECT_EQ(Claim(*store, "cpu:0"), "j1/0");
    v1::Trial trial;
    trial.set_job_id("j1");
    store->AddTrial("j1/0", "cls", trial);
    // The daemon dies here without finishing j1/0.
  }
  auto store = Open();
  EXPECT_EQ(store->RequeueInterrupted(), 1);
  auto job = store->GetJob("j1");
  EXPECT_EQ(job->state(), v1::JOB_RUNNING);
  EXPECT_EQ(job->items(0).state(), v1::JOB_QUEUED);
  EXPECT_EQ(store->TrialsForItem("j1", 0).size(), 1u);
  EXPECT_EQ(store->RequeueInterrupted(), 0);
  EXPECT_EQ(Claim(*store, "cpu:0"), "j1/0");
}

TEST_P(StoreJobs, ListIsNewestFirstFilteredAndPaged) {
  auto store = Open();
  for (int i = 0; i < 7; ++i) Create(*store, Job("j" + std::to_string(i), "cpu:0", 0, 100 + i));
  store->CancelJob("j2");
  store->CancelJob("j5");

  std::vector<std::string> ids;
  std::string token;
  int pages = 0;
  do {
    auto page = store->ListJobs({}, 3, token);
    ++pages;
    for (const auto& job : page.jobs) {
      ids.push_back(job.id());
      EXPECT_EQ(job.items_size(), 2);
    }
    token = page.next_page_token;
  } while (!token.empty());
  EXPECT_EQ(ids, (std::vector<std::string>{"j6", "j5", "j4", "j3", "j2", "j1", "j0"}));
  EXPECT_EQ(pages, 3);

  auto cancelled = store->ListJobs({v1::JOB_CANCELLED}, 0, "");
  ASSERT_EQ(cancelled.jobs.size(), 2u);
  EXPECT_EQ(cancelled.jobs[0].id(), "j5");
  EXPECT_EQ(cancelled.jobs[1].id(), "j2");
  EXPECT_EQ(store->ListJobs({v1::JOB_QUEUED, v1::JOB_CANCELLED}, 0, "").jobs.size(), 7u);
  EXPECT_THROW(store->ListJobs({}, 3, "zz"), std::invalid_argument);
}

TEST_P(StoreJobs, EachListedJobHasTheTokenThatListsOnAfterIt) {
  auto store = Open();
  for (int i = 0; i < 5; ++i) Create(*store, Job("j" + std::to_string(i), "cpu:0", 0, 100 + i));
  auto page = store->ListJobs({}, 3, "");
  ASSERT_EQ(page.tokens_after.size(), 3u);
  EXPECT_EQ(page.next_page_token, page.tokens_after.back());
  auto rest = store->ListJobs({}, 10, page.tokens_after[0]);
  ASSERT_EQ(rest.jobs.size(), 4u);
  EXPECT_EQ(rest.jobs[0].id(), "j3");
  EXPECT_TRUE(rest.next_page_token.empty());
  EXPECT_EQ(rest.tokens_after.size(), 4u);
}

TEST_P(StoreJobs, AdmissionReusesTheActiveJobForAKeyInTheSameQueue) {
  auto store = Open();
  Create(*store, Job("j1", "cpu:0", 0, 1));
  const JobAdmission reuse{.reuse_active_for_key = true};
  auto one = [](const std::string& id, const std::string& device) {
    return Job(id, device, 0, 2, 1);
  };
  auto reused = store->CreateJob(one("n1", "cpu:0"), {"j1/1"}, reuse);
  EXPECT_EQ(reused.outcome, Outcome::kReused);
  EXPECT_EQ(reused.job_id, "j1");
  EXPECT_FALSE(store->GetJob("n1"));
  // Another queue, another key: created.
  EXPECT_EQ(store->CreateJob(one("n2", "cpu:1"), {"j1/1"}, reuse).job_id, "n2");
  EXPECT_EQ(store->CreateJob(one("n3", "cpu:0"), {"j9/0"}, reuse).job_id, "n3");
  // A finished item no longer stands for its key; the job's other one does.
  Claim(*store, "cpu:0");
  v1::JobItemProgress done;
  done.set_index(0);
  done.set_state(v1::JOB_SUCCEEDED);
  store->UpdateItem("j1", done, kUnleased);
  EXPECT_EQ(store->CreateJob(one("n4", "cpu:0"), {"j1/0"}, reuse).job_id, "n4");
  EXPECT_EQ(store->CreateJob(one("n5", "cpu:0"), {"j1/1"}, reuse).job_id, "j1");
  store->CancelJob("j1");
  EXPECT_EQ(store->CreateJob(one("n6", "cpu:0"), {"j1/1"}, reuse).job_id, "n6");
}

// A job `id` of one kernel submitted by `by` with `request_id`; its spec
// does not depend on `id`.
v1::Job Requested(const std::string& id, const std::string& by, const std::string& request_id) {
  auto job = Job(id, "cpu:0", 0, 100, 1);
  job.mutable_spec()->set_name("requested");
  job.set_submitted_by(by);
  job.set_request_id(request_id);
  return job;
}

TEST_P(StoreJobs, ARepeatedRequestIdAnswersItsJobEvenPastTheCapsAndAcrossReopening) {
  const JobAdmission one_active{.max_active = 1};
  {
    auto store = Open();
    auto first = store->CreateJob(Requested("a1", "alice", "r-1"), {"a1/0"}, one_active);
    EXPECT_EQ(first.outcome, Outcome::kCreated);
    EXPECT_EQ(store->GetJob("a1")->request_id(), "r-1");
  }
  auto store = Open();
  // The queue is full, yet the retry finds its job; nothing is written.
  auto again = store->CreateJob(Requested("a2", "alice", "r-1"), {"a2/0"}, one_active);
  EXPECT_EQ(again.outcome, Outcome::kAlreadyExists);
  EXPECT_EQ(again.job_id, "a1");
  EXPECT_FALSE(store->GetJob("a2"));
  // Finished jobs keep their request ids.
  store->FinishJob("a1", v1::JOB_SUCCEEDED, "");
  EXPECT_EQ(store->CreateJob(Requested("a3", "alice", "r-1"), {"a3/0"}, one_active).job_id, "a1");
  // The id is per submitter; no id never matches.
  EXPECT_EQ(store->CreateJob(Requested("b1", "bob", "r-1"), {"b1/0"}, {}).outcome,
            Outcome::kCreated);
  Create(*store, Requested("n1", "alice", ""));
  Create(*store, Requested("n2", "alice", ""));
  EXPECT_EQ(store->GetJob("n1")->request_id(), "");
  EXPECT_EQ(Query("SELECT count(*) FROM jobs WHERE request_id IS NULL"), "2");
}

TEST_P(StoreJobs, ARequestIdRepeatedWithAnotherSpecIsRefused) {
  auto store = Open();
  Create(*store, Requested("a1", "alice", "r-1"));
  auto same = Requested("a2", "alice", "r-1");
  EXPECT_EQ(store->CreateJob(same, {"a2/0"}, {}).outcome, Outcome::kAlreadyExists);
  auto other = same;
  other.mutable_spec()->mutable_kernels(0)->mutable_shape(0)->set_size(2);
  auto refused = store->CreateJob(other, {"a2/0"}, {});
  EXPECT_EQ(refused.outcome, Outcome::kRequestIdTaken);
  EXPECT_EQ(refused.job_id, "a1");
  EXPECT_FALSE(store->GetJob("a2"));
  EXPECT_EQ(Query("SELECT count(*) FROM jobs"), "1");
}

// Daemons sharing one database (two stores here), each with several
// threads, create with one request id at once: one job is stored and every
// other creation answers it.
TEST_P(StoreJobs, ConcurrentCreationsWithOneRequestIdStoreOneJob) {
  auto a = Open();
  auto b = Open();
  constexpr int kThreads = 8;
  std::vector<JobAdmissionResult> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto job = Requested("j" + std::to_string(t), "alice", "shared");
      results[t] = (t % 2 == 0 ? *a : *b).CreateJob(job, {job.id() + "/0"}, {});
    });
  }
  for (auto& thread : threads) thread.join();
  std::string created;
  for (const auto& result : results) {
    if (result.outcome == Outcome::kCreated) {
      EXPECT_TRUE(created.empty()) << "created twice: " << created << " and " << result.job_id;
      created = result.job_id;
    }
  }
  ASSERT_FALSE(created.empty());
  for (const auto& result : results) {
    EXPECT_EQ(result.job_id, created);
    EXPECT_TRUE(result.outcome == Outcome::kCreated || result.outcome == Outcome::kAlreadyExists);
  }
  EXPECT_EQ(Query("SELECT count(*) FROM jobs"), "1");
  EXPECT_EQ(Query("SELECT count(*) FROM job_items"), "1");
}

// Daemons sharing the database that each see a job's last item finished
// finish it together: one is told it did, so that one counts it.
TEST_P(StoreJobs, OfConcurrentFinishesOfAJobExactlyOneFinishesIt) {
  auto a = Open();
  auto b = Open();
  constexpr int kJobs = 20;
  constexpr int kThreads = 8;
  for (int j = 0; j < kJobs; ++j) Create(*a, Job("j" + std::to_string(j), "cpu:0", 0, j, 1));
  std::atomic<int> finished = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int j = 0; j < kJobs; ++j) {
        if ((t % 2 == 0 ? *a : *b).FinishJob("j" + std::to_string(j), v1::JOB_SUCCEEDED, "")) {
          ++finished;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(finished.load(), kJobs);
}

TEST_P(StoreJobs, CountsJobsByState) {
  auto store = Open();
  EXPECT_TRUE(store->CountJobsByState().empty());
  Create(*store, Job("j1", "cpu:0", 0, 1));
  Create(*store, Job("j2", "cpu:0", 0, 2));
  Create(*store, Job("j3", "cpu:0", 0, 3));
  store->CancelJob("j3");
  Claim(*store, "cpu:0");
  auto counts = store->CountJobsByState();
  EXPECT_EQ(counts, (std::map<v1::JobState, int64_t>{
                        {v1::JOB_QUEUED, 1}, {v1::JOB_RUNNING, 1}, {v1::JOB_CANCELLED, 1}}));
}

TILETUNE_STORE_TEST_SUITE(StoreJobs);

}  // namespace
}  // namespace tiletune::db
