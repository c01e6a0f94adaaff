// Connecting to PostgreSQL: schema creation and versions, errors that name
// the server without its password, lost connections, and several stores
// (daemons) on one database at once.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "db/postgres_connection.h"
#include "db/tuning_store.h"
#include "store_test.h"

namespace tiletune::db {
namespace {

using PostgresOpen = PostgresStoreTest;

v1::Record Record(double tuned_us) {
  v1::Record record;
  record.mutable_key()->set_op("gemm");
  record.set_device_class("cls-a");
  record.mutable_tuned()->set_median_us(tuned_us);
  return record;
}

TEST(PgPlaceholders, NumberedSqlitePlaceholdersBecomePostgresOnes) {
  EXPECT_EQ(PgPlaceholders("UPDATE t SET a = ?1, b = ?12 WHERE c IN (?2, ?2)"),
            "UPDATE t SET a = $1, b = $12 WHERE c IN ($2, $2)");
  EXPECT_EQ(PgPlaceholders("SELECT a ? b"), "SELECT a ? b");  // no number: left alone
}

// A loopback port with nothing listening: the socket is bound, never
// listened on, so connecting is refused while it stays open.
class DeadPort {
 public:
  DeadPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), length), 0);
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length), 0);
    port_ = ntohs(address.sin_port);
  }
  ~DeadPort() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const StoreError& e) {
    return e.what();
  }
  return "no StoreError";
}

TEST_F(PostgresOpen, CreatesTheSchemaAndItsVersion) {
  Open()->PutRecord("gemm:1", Record(3));
  EXPECT_EQ(Query("SELECT max(version) FROM schema_version"),
            std::to_string(PostgresSchemaVersion()));
  EXPECT_EQ(Query("SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename IN"
                  " ('devices', 'kernels', 'records', 'trials', 'jobs', 'job_items',"
                  " 'known_failures')"),
            "7");
  // Reopening finds the schema current and the data there.
  auto store = Open();
  EXPECT_EQ(store->FindRecord("gemm:1", "cls-a")->tuned().median_us(), 3);
  EXPECT_EQ(store->IntegrityCheck(), "ok");
  EXPECT_EQ(Query("SELECT count(*) FROM schema_version"), "1");
}

TEST_F(PostgresOpen, RefusesANewerSchemaAndLeavesItAlone) {
  Open();
  int newer = PostgresSchemaVersion() + 1;
  Query("UPDATE schema_version SET version = " + std::to_string(newer));
  std::string display = "postgresql://tiletune@" +
                        Query("SELECT host(inet_server_addr()) || ':' || inet_server_port()") +
                        "/" + database_->name();
  EXPECT_EQ(ErrorOf([&] { Open(); }), display + ": database schema version " +
                                          std::to_string(newer) +
                                          " is newer than this tiletuned supports (" +
                                          std::to_string(PostgresSchemaVersion()) +
                                          "); upgrade tiletuned or use another --db");
  EXPECT_EQ(Query("SELECT max(version) FROM schema_version"), std::to_string(newer));
}

TEST_F(PostgresOpen, ConnectErrorsNameTheServerButNotThePassword) {
  DeadPort dead;
  std::string url =
      "postgresql://someone:sekrit-pw@127.0.0.1:" + std::to_string(dead.port()) + "/tuning";
  std::string message = ErrorOf([&] { OpenPostgresStore({url}); });
  EXPECT_NE(message.find("database postgresql://someone@127.0.0.1:" + std::to_string(dead.port()) +
                         "/tuning: cannot connect"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("sekrit"), std::string::npos) << message;

  // A wrong password on the real server.
  std::string real = database_->url();
  auto colon = real.find(':', real.find("://") + 3);
  auto at = real.find('@');
  std::string wrong = real.substr(0, colon + 1) + "sekrit-pw" + real.substr(at);
  message = ErrorOf([&] { OpenPostgresStore({wrong}); });
  EXPECT_NE(message.find("password authentication failed"), std::string::npos) << message;
  EXPECT_EQ(message.find("sekrit"), std::string::npos) << message;

  EXPECT_NE(ErrorOf([] { OpenPostgresStore({"postgresql://host:notaport:1/x"}); }),
            "no StoreError");
  EXPECT_EQ(DescribeDb(url),
            "postgresql://someone@127.0.0.1:" + std::to_string(dead.port()) + "/tuning");
  EXPECT_EQ(DescribeDb("/var/lib/tiletune/tiletune.db"), "/var/lib/tiletune/tiletune.db");
}

TEST_F(PostgresOpen, ConnectionsMustBePositive) {
  EXPECT_THROW(Open(0), std::invalid_argument);
}

TEST_F(PostgresOpen, RecoversWhenTheServerDropsItsConnections) {
  auto store = Open(1);
  store->PutRecord("gemm:1", Record(3));
  EXPECT_EQ(Query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                  " WHERE datname = current_database() AND pid <> pg_backend_pid()"),
            "1");
  // The call on the dead connection may fail, naming the database; the
  // pool then drops it and the next call connects again.
  int failures = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      EXPECT_TRUE(store->FindRecord("gemm:1", "cls-a"));
    } catch (const StoreError& e) {
      ++failures;
      EXPECT_NE(std::string(e.what()).find(database_->name()), std::string::npos) << e.what();
    }
  }
  EXPECT_LE(failures, 1);
  EXPECT_TRUE(store->FindRecord("gemm:1", "cls-a"));
}

// A job of `items` items on device "cls-a".
v1::Job Job(const std::string& id, int items) {
  v1::Job job;
  job.set_id(id);
  job.set_device("cls-a");
  for (int i = 0; i < items; ++i) job.mutable_spec()->add_kernels()->set_op("softmax");
  return job;
}

TEST_F(PostgresOpen, WritesAReadOnlyServerRefusesAreUnwritableAndToldUntilOneLands) {
  auto store = Open(1);
  std::vector<std::string> told;
  store->ReportWrites(
      [&told](const StoreUnwritable* refused) { told.push_back(refused ? "refused" : "stored"); });
  store->PutRecord("gemm:1", Record(3));
  store->FindRecord("gemm:1", "cls-a");
  EXPECT_EQ(told, std::vector<std::string>{"stored"});
  // The database turns read-only for every new session; the store's
  // connection is dropped so that it opens one of those.
  const auto set_read_only = [&](bool on) {
    testing::QueryPostgres(*testing::PostgresAdminUrl(),
                           "ALTER DATABASE \"" + database_->name() + "\" SET " +
                               "default_transaction_read_only = " + (on ? "on" : "off"));
    Query(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()");
  };
  // The first call after may find its connection closed (StoreUnreachable).
  const auto put = [&](const std::string& key) {
    for (int attempt = 0;; ++attempt) {
      try {
        store->PutRecord(key, Record(4));
        return;
      } catch (const StoreUnreachable&) {
        if (attempt > 0) throw;
      }
    }
  };
  set_read_only(true);
  EXPECT_THROW(put("gemm:2"), StoreUnwritable);
  EXPECT_EQ(told.back(), "refused");
  // A transaction's write, refused the same way.
  EXPECT_THROW(store->CreateJob(Job("j1", 1), {"j1/0"}), StoreUnwritable);
  EXPECT_TRUE(store->FindRecord("gemm:1", "cls-a"));  // reads go on
  set_read_only(false);
  put("gemm:2");
  EXPECT_EQ(told.back(), "stored");
  store->CreateJob(Job("j1", 1), {"j1/0"});
  EXPECT_EQ(told.back(), "stored");
  EXPECT_TRUE(store->FindRecord("gemm:2", "cls-a"));
}

TEST_F(PostgresOpen, DaemonsClaimingAtOnceNeverShareAnItem) {
  // Two stores stand for two daemons; each claims from four threads.
  std::vector<std::unique_ptr<TuningStore>> stores;
  std::vector<std::thread> opening;
  stores.resize(2);
  // Both migrate a fresh database at the same moment.
  for (auto& store : stores) opening.emplace_back([&] { store = Open(4); });
  for (auto& thread : opening) thread.join();
  constexpr int kJobs = 6;
  constexpr int kItems = 10;
  for (int j = 0; j < kJobs; ++j) {
    auto job = Job("j" + std::to_string(j), kItems);
    std::vector<std::string> keys;
    for (int i = 0; i < kItems; ++i) keys.push_back(job.id() + "/" + std::to_string(i));
    stores[j % 2]->CreateJob(job, keys);
  }
  std::mutex mutex;
  std::vector<std::string> claimed;
  std::vector<std::thread> claimers;
  for (int t = 0; t < 8; ++t) {
    claimers.emplace_back([&, t] {
      auto& store = *stores[t % 2];
      while (auto claim = store.ClaimNextItem("cls-a")) {
        std::lock_guard lock(mutex);
        claimed.push_back(claim->job_id + "/" + std::to_string(claim->item_index));
      }
    });
  }
  for (auto& thread : claimers) thread.join();
  std::set<std::string> distinct(claimed.begin(), claimed.end());
  EXPECT_EQ(claimed.size(), static_cast<std::size_t>(kJobs * kItems));
  EXPECT_EQ(distinct.size(), claimed.size());
  EXPECT_EQ(
      Query("SELECT count(*) FROM job_items WHERE state = " + std::to_string(v1::JOB_RUNNING)),
      std::to_string(kJobs * kItems));
}

}  // namespace
}  // namespace tiletune::db
