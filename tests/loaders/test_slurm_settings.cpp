// Slurm's scheduling settings (loaders/slurm_settings.hpp): what `simulate --format slurm` takes from a
// dump's scontrol-config.txt (slurmctld's SchedulerType, bf_interval, priority/multifactor's parameters,
// BOOT_TIME), what a policy's [policy.slurm] table overrides, and the errors and warnings for values Slurm
// refuses or colmatch does not model.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/schedule/simulation.hpp"
#include "engine/schedule/slurm_priority.hpp"
#include "loaders/errors.hpp"
#include "loaders/policy.hpp"
#include "loaders/slurm.hpp"
#include "loaders/slurm_qos.hpp"
#include "loaders/slurm_settings.hpp"
#include "loaders/slurm_sshare.hpp"
#include "loaders/slurm_text.hpp"
#include "tests/loaders/slurm_test_data.hpp"

using namespace colmatch;
using namespace colmatch::slurm_test;
namespace fs = std::filesystem;

namespace {

// run16-fifo's cluster with `config` as its scontrol-config.txt; the caller removes the folder.
std::string dump_with_config(const std::string& name, const std::string& config) {
  const fs::path dir = fs::temp_directory_path() / ("colmatch-settings-" + std::to_string(::getpid()) + "-" + name);
  fs::create_directories(dir);
  for (const char* f : {"scontrol-node.txt", "scontrol-partition.txt"})
    fs::copy_file(kData + "run16-fifo/dump/" + f, dir / f, fs::copy_options::overwrite_existing);
  std::ofstream(dir / "scontrol-config.txt") << "Configuration data as of 2026-11-29T12:00:00\n" << config;
  return dir.string();
}

// Each job of `ds` submitted into priority/multifactor as the dump configures it, its priority compared with
// the one slurmctld gave it (`slurm_oracle.sh prio`: job id, priority; Slurm numbered the jobs in line order).
// Returns how many were compared.
size_t compare_submit_priorities(const loaders::Dataset& ds, const std::string& answers) {
  SlurmPriority prio = SlurmPriority::of_farm(ds.catalog, ds.taskers, ds.jobs, ds.policy_defaults);
  std::ifstream in(answers);
  size_t compared = 0;
  for (std::string line; std::getline(in, line); ++compared) {
    const std::vector<std::string> f = tsv_fields(line, 2);
    const auto j = static_cast<uint32_t>(std::stoul(f[0]) - 1);
    SCOPED_TRACE(line);
    prio.submitted(j, ds.jobs.submit[j]);
    EXPECT_EQ(prio.priority(j), std::stod(f[1]));
  }
  return compared;
}

}  // namespace

// Without settings a dump is Slurm 22.05's defaults: sched/backfill every 30 s (conservative: each backfill
// cycle plans every waiting job), priority/basic.
TEST(SlurmSettings, ADumpWithoutSettingsSchedulesAsSlurmsDefaults) {
  const std::string dir = dump_with_config("defaults", "");
  const loaders::Dataset ds = loaders::load_slurm(dir, "", "");
  fs::remove_all(dir);
  EXPECT_EQ(ds.policy_defaults.backfill, BackfillPolicy::Conservative);
  EXPECT_EQ(ds.policy_defaults.backfill_interval, 30);
  EXPECT_EQ(ds.policy_defaults.backfill_window, 86400) << "bf_window: 1 day";
  EXPECT_EQ(ds.policy_defaults.backfill_max_jobs, 500u) << "bf_max_job_test";
  EXPECT_EQ(ds.policy_defaults.backfill_resolution, 60) << "bf_resolution: 60 s";
  EXPECT_EQ(ds.policy_defaults.main_pass_depth, 100u) << "default_queue_depth";
  EXPECT_EQ(ds.policy_defaults.main_pass_full_interval, 60) << "sched_interval";
  EXPECT_EQ(ds.policy_defaults.main_pass_partition_depth, 0u) << "partition_job_depth: no limit";
  EXPECT_EQ(ds.policy_defaults.main_pass_max_starts, 0u) << "sched_max_job_start: no limit";
  EXPECT_FALSE(ds.policy_defaults.slurm_priority.enabled);
  EXPECT_EQ(ds.policy_defaults.allocation, AllocationPolicy::ConsecutiveBestFit) << "the node choice stays Slurm's";
}

// The recorded multifactor run's settings as `scontrol show config` printed them (PriorityWeightFairShare
// with a capital S; PriorityCalcPeriod as a time); sched/builtin has no backfill.
TEST(SlurmSettings, TheDumpsConfigSetsTheSchedulerAndMultifactorPriority) {
  const std::string dir = dump_with_config("multifactor",
                                           "BOOT_TIME               = 2026-11-29T12:45:19\n"
                                           "PriorityDecayHalfLife   = 7-00:00:00\n"
                                           "PriorityCalcPeriod      = 00:01:00\n"
                                           "PriorityFavorSmall      = No\n"
                                           "PriorityFlags           = \n"
                                           "PriorityMaxAge          = 00:05:00\n"
                                           "PriorityUsageResetPeriod = WEEKLY\n"
                                           "PriorityType            = priority/multifactor\n"
                                           "PriorityWeightAge       = 1000\n"
                                           "PriorityWeightFairShare = 10\n"
                                           "PriorityWeightJobSize   = 2000\n"
                                           "PriorityWeightTRES      = (null)\n"
                                           "SchedulerParameters     = batch_sched_delay=0,bf_interval=10,"
                                           "bf_window=120,bf_max_job_test=1000,bf_max_job_user=3,"
                                           "bf_min_prio_reserve=700,bf_resolution=300,bf_max_job_part=40,"
                                           "bf_max_job_user_part=4,default_queue_depth=50,sched_interval=30,"
                                           "bf_min_age_reserve=45,bf_interval=99,partition_job_depth=7,"
                                           "sched_max_job_start=3\n"
                                           "SchedulerType           = sched/backfill\n");
  const loaders::Dataset ds = loaders::load_slurm(dir, "", "");
  const SimConfig& p = ds.policy_defaults;
  EXPECT_EQ(p.backfill_interval, 10);
  EXPECT_EQ(p.backfill_window, 7200);
  EXPECT_EQ(p.backfill_max_jobs, 1000u);
  EXPECT_EQ(p.backfill_max_jobs_per_user, 3u);
  EXPECT_EQ(p.backfill_min_priority_reserve, 700);
  EXPECT_EQ(p.backfill_resolution, 300);
  EXPECT_EQ(p.backfill_max_jobs_per_partition, 40u);
  EXPECT_EQ(p.backfill_max_jobs_per_user_partition, 4u);
  EXPECT_EQ(p.main_pass_depth, 50u);
  EXPECT_EQ(p.main_pass_partition_depth, 7u) << "partition_job_depth";
  EXPECT_EQ(p.main_pass_max_starts, 3u) << "sched_max_job_start";
  EXPECT_EQ(p.backfill_min_age_reserve, 45);
  EXPECT_EQ(p.backfill_interval, 10) << "an option given twice: slurmctld reads the first (xstrcasestr)";
  EXPECT_EQ(p.main_pass_full_interval, 30);
  EXPECT_EQ(p.backfill, BackfillPolicy::Conservative);
  const SlurmMultifactor& mf = p.slurm_priority;
  EXPECT_TRUE(mf.enabled);
  EXPECT_EQ(mf.weight_age, 1000);
  EXPECT_EQ(mf.weight_fairshare, 10);
  EXPECT_EQ(mf.weight_job_size, 2000);
  EXPECT_EQ(mf.max_age, 300);
  EXPECT_EQ(mf.calc_period, 60);
  EXPECT_EQ(mf.decay_half_life, 7 * 86400);
  EXPECT_EQ(mf.usage_reset, SlurmUsageReset::Weekly);
  // the decay thread's first run came 1 s after BOOT_TIME (datasets/slurm/run16-fairshare's sprio ages)
  EXPECT_EQ(mf.calc_phase, loaders::slurm::parse_slurm_date("2026-11-29T12:45:19") + 1);
  EXPECT_TRUE(std::isnan(p.backfill_phase)) << "backfill timed as Slurm's backfill thread: after its last run";
  EXPECT_TRUE(ds.taskers.warnings.empty()) << ds.taskers.warnings.front();

  // a policy file over it: the keys by slurm.conf's names
  const std::string policy = temp_file("slurm-policy.toml",
                                       "[policy.slurm]\n"
                                       "SchedulerType = \"sched/builtin\"\n"
                                       "PriorityWeightFairshare = 5000\n"
                                       "PriorityCalcPeriod = 5\n"
                                       "PriorityFavorSmall = true\n"
                                       "PriorityUsageResetPeriod = \"quarterly\"\n"
                                       "[[policy.slurm.associations]]\n"
                                       "account = \"physics\"\n"
                                       "shares = 3\n");
  const SimConfig q = loaders::read_policy_toml(policy, ds.policy_defaults);
  fs::remove(policy);
  fs::remove_all(dir);
  EXPECT_EQ(q.backfill, BackfillPolicy::None);
  EXPECT_TRUE(std::isnan(q.backfill_phase)) << "the dump's: as Slurm's backfill thread";
  const std::string grid = temp_file("grid-policy.toml", "[policy]\nbackfill_phase = 3\n");
  EXPECT_EQ(loaders::read_policy_toml(grid, ds.policy_defaults).backfill_phase, 3);
  const std::string back = temp_file("back-policy.toml", "[policy]\nbackfill_phase = \"slurm\"\n");
  EXPECT_TRUE(std::isnan(loaders::read_policy_toml(back).backfill_phase));
  const std::string wrong = temp_file("wrong-policy.toml", "[policy]\nbackfill_phase = \"moab\"\n");
  EXPECT_THROW(loaders::read_policy_toml(wrong), loaders::LoadError);
  for (const std::string& f : {grid, back, wrong}) fs::remove(f);
  EXPECT_EQ(q.slurm_priority.weight_fairshare, 5000);
  EXPECT_EQ(q.slurm_priority.weight_age, 1000) << "what the file leaves alone stays the dump's";
  EXPECT_EQ(q.slurm_priority.calc_period, 300);
  EXPECT_TRUE(q.slurm_priority.favor_small);
  EXPECT_EQ(q.slurm_priority.usage_reset, SlurmUsageReset::Quarterly) << "read_config.c: any case";
  ASSERT_EQ(q.slurm_priority.associations.size(), 1u);
  EXPECT_EQ(q.slurm_priority.associations[0].shares, 3);
}

// bf_max_job_assoc: jobs tried a backfill cycle per association; with bf_max_job_user too, slurmctld logs
// "Both bf_max_job_user and bf_max_job_assoc are set: bf_max_job_assoc taking precedence" and drops the user's.
TEST(SlurmSettings, BfMaxJobAssocTakesPrecedenceOverBfMaxJobUser) {
  const std::string both =
      dump_with_config("assoc", "SchedulerParameters     = bf_max_job_user=3,bf_max_job_assoc=2\n");
  const SimConfig p = loaders::load_slurm(both, "", "").policy_defaults;
  fs::remove_all(both);
  EXPECT_EQ(p.backfill_max_jobs_per_association, 2u);
  EXPECT_EQ(p.backfill_max_jobs_per_user, 0u);
  const std::string user = dump_with_config("user", "SchedulerParameters     = bf_max_job_user=3\n");
  const SimConfig q = loaders::load_slurm(user, "", "").policy_defaults;
  fs::remove_all(user);
  EXPECT_EQ(q.backfill_max_jobs_per_association, 0u);
  EXPECT_EQ(q.backfill_max_jobs_per_user, 3u);
  const std::string policy =
      temp_file("assoc-policy.toml",
                "[policy]\nbackfill_max_jobs_per_association = 4\nbackfill_max_jobs_per_user = 5\n"
                "backfill_max_jobs_per_partition = 6\nbackfill_max_jobs_per_user_partition = 7\n");
  const SimConfig r = loaders::read_policy_toml(policy);
  fs::remove(policy);
  EXPECT_EQ(r.backfill_max_jobs_per_association, 4u);
  EXPECT_EQ(r.backfill_max_jobs_per_user, 5u) << "a policy's own keys: no precedence between them";
  EXPECT_EQ(r.backfill_max_jobs_per_partition, 6u);
  EXPECT_EQ(r.backfill_max_jobs_per_user_partition, 7u);
  const std::string negative = temp_file("assoc-bad.toml", "[policy]\nbackfill_max_jobs_per_association = -1\n");
  EXPECT_THROW(loaders::read_policy_toml(negative), loaders::LoadError);
  fs::remove(negative);
}

// A value Slurm refuses is an error naming the file, line and key; one Slurm takes that colmatch does not
// model is a warning from a dump (the cluster is what it is) and an error in a policy (a what-if that
// would not do what it says).
TEST(SlurmSettings, RefusedValuesAreErrorsAndUnmodeledOnesSaySo) {
  const std::string bad = dump_with_config("bad",
                                           "PriorityType            = priority/basic\n"
                                           "PriorityWeightAge       = lots\n");
  try {
    loaders::load_slurm(bad, "", "");
    ADD_FAILURE() << "a weight that is not a number";
  } catch (const loaders::LoadError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("scontrol-config.txt:3"), std::string::npos) << what;
    EXPECT_NE(what.find("PriorityWeightAge"), std::string::npos) << what;
  }
  fs::remove_all(bad);
  // an option out of range: slurmctld logs an error and takes its default, so a dump warns and does too
  const std::string range = dump_with_config("range",
                                             "SchedulerParameters     = bf_interval=0,bf_window=99999,"
                                             "bf_max_job_test=20,bf_continue\n");
  const loaders::Dataset ranged = loaders::load_slurm(range, "", "");
  fs::remove_all(range);
  EXPECT_EQ(ranged.policy_defaults.backfill_interval, 30);
  EXPECT_EQ(ranged.policy_defaults.backfill_window, 86400);
  EXPECT_EQ(ranged.policy_defaults.backfill_max_jobs, 20u);
  ASSERT_EQ(ranged.taskers.warnings.size(), 1u);
  EXPECT_NE(ranged.taskers.warnings[0].find("bf_interval=0 is out of range"), std::string::npos);
  EXPECT_NE(ranged.taskers.warnings[0].find("bf_window=99999 is out of range"), std::string::npos);
  const std::string off = dump_with_config("off",
                                           "SchedulerParameters     = bf_interval=-1\n"
                                           "SchedulerType           = sched/backfill\n");
  EXPECT_EQ(loaders::load_slurm(off, "", "").policy_defaults.backfill, BackfillPolicy::None)
      << "bf_interval=-1 turns sched/backfill's backfill off, whichever line comes first";
  fs::remove_all(off);
  const std::string warn = dump_with_config("warn",
                                            "AccountingStorageType   = accounting_storage/none\n"
                                            "PriorityType            = priority/multifactor\n"
                                            "PriorityWeightAge       = 1000\n"
                                            "PriorityFlags           = CALCULATE_RUNNING,ACCRUE_ALWAYS\n");
  const loaders::Dataset ds = loaders::load_slurm(warn, "", "");
  fs::remove_all(warn);
  // (the two flags change nothing a schedule here reads: no warning)
  ASSERT_EQ(ds.taskers.warnings.size(), 1u) << ds.taskers.warnings[0];
  EXPECT_NE(ds.taskers.warnings[0].find("count only with slurmdbd"), std::string::npos) << "as slurmctld logs it";
  EXPECT_FALSE(ds.policy_defaults.slurm_priority.accounting);
  const std::string oblivious = dump_with_config("oblivious",
                                                 "PriorityType            = priority/multifactor\n"
                                                 "PriorityFlags           = DEPTH_OBLIVIOUS\n");
  const loaders::Dataset od = loaders::load_slurm(oblivious, "", "");
  fs::remove_all(oblivious);
  EXPECT_TRUE(od.taskers.warnings.empty()) << od.taskers.warnings[0];
  EXPECT_TRUE(od.policy_defaults.slurm_priority.depth_oblivious);
  EXPECT_FALSE(od.policy_defaults.slurm_priority.fair_tree) << "the classic formula, depth-oblivious";
  for (const char* line : {"PriorityWeightTRES = \"license/matlab=1\"", "PriorityWeightTRES = \"cores=1\"",
                           "PriorityWeightAssoc = -1", "PriorityDecay = 3", "PriorityMaxAge = \"-1\"",
                           "PriorityUsageResetPeriod = \"HOURLY\"", "SchedulerParameters = \"bf_window=0\""}) {
    const std::string policy = temp_file("slurm-bad.toml", std::string("[policy.slurm]\n") + line + "\n");
    EXPECT_THROW(loaders::read_policy_toml(policy), loaders::LoadError) << line;
    fs::remove(policy);
  }
}

// sacctmgr -P show qos format=Name,Priority (loaders/slurm_qos.hpp) as run2-qos's dump holds it, and what it
// refuses, naming file, line and field.
TEST(SlurmSettings, QosPrioritiesAsSacctmgrPrintsThem) {
  const std::map<std::string, double> qos = loaders::slurm::read_qos(kData + "run2-qos/dump/sacctmgr-qos.txt");
  EXPECT_EQ(qos, (std::map<std::string, double>{{"high", 1000}, {"low", 10}, {"normal", 0}}));
  for (const auto& [text, where] : std::vector<std::pair<std::string, std::string>>{
           {"Name|Priority\nhigh|x\n", ":2: field 'Priority'"},
           {"Name|Priority\nhigh|-1\n", ":2: field 'Priority'"},
           {"Name|Priority\nhigh|1.5\n", ":2: field 'Priority'"},
           {"Name|Priority\nhigh|1\nhigh|2\n", ":3: field 'Name'"},
           {"Name|Priority\n|1\n", ":2: field 'Name'"},
           {"Name|Priority\nhigh|1|x\n", ":2: 3 fields, the header names 2"},
           {"Name|Prio\nhigh|1\n", ":1: expected sacctmgr"},
           {"Name|Priority|UsageFactor\nhigh|1|-0.5\n", ":2: field 'UsageFactor'"},
           {"Name|Priority|UsageFactor\nhigh|1|lots\n", ":2: field 'UsageFactor'"}}) {
    const std::string path = temp_file("sacctmgr-qos.txt", text);
    try {
      loaders::slurm::read_qos(path);
      ADD_FAILURE() << text;
    } catch (const loaders::LoadError& e) {
      EXPECT_NE(std::string(e.what()).find(path + where), std::string::npos) << e.what();
    }
    fs::remove(path);
  }
}

// sacctmgr's UsageFactor column (tools/slurm-dump.sh's format=Name,Priority,UsageFactor): per QOS, empty read
// as unset (1), and each job's (its QOS, none: normal) in SlurmMultifactor::usage_factor; all 1: left empty.
TEST(SlurmSettings, QosUsageFactorsAsSacctmgrPrintsThem) {
  const std::string path = temp_file("sacctmgr-qos.txt",
                                     "Name|Priority|UsageFactor\nnormal|0|1.000000\n"
                                     "free|0|0.000000\nbig|10|2.500000\nodd|0|\n");
  std::map<std::string, double> factors;
  EXPECT_EQ(loaders::slurm::read_qos(path, &factors).size(), 4u);
  fs::remove(path);
  EXPECT_EQ(factors, (std::map<std::string, double>{{"big", 2.5}, {"free", 0}, {"normal", 1}, {"odd", 1}}));
  const fs::path dir = fs::temp_directory_path() / ("colmatch-slurm-uf-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"scontrol-config.txt", "scontrol-node.txt", "scontrol-partition.txt", "sshare.txt"})
    fs::copy_file(kData + "run2-qos/dump/" + f, dir / f);
  std::ofstream(dir / "sacctmgr-qos.txt") << "Name|Priority|UsageFactor\nnormal|0|1.000000\nfree|0|0.000000\n";
  const std::string jobs = temp_file("uf.jobs", "-q free -c 1\n-c 1\n");
  const loaders::Dataset ds = loaders::load_slurm(dir.string(), jobs);
  EXPECT_EQ(ds.policy.slurm_priority.usage_factor, (std::vector<double>{0, 1}));
  std::ofstream(dir / "sacctmgr-qos.txt") << "Name|Priority|UsageFactor\nnormal|0|1.000000\nfree|0|1.000000\n";
  EXPECT_TRUE(loaders::load_slurm(dir.string(), jobs).policy.slurm_priority.usage_factor.empty());
  fs::remove_all(dir);
  fs::remove(jobs);
  // sacctmgr 22.05.8's own output (datasets/slurm/run2-usage-factor: QOS free at UsageFactor=0; after its job
  // and account b's ran alike, sshare gave a RawUsage 0 and b 147): the replay's jobs get 0 and 1
  const std::string run = kData + "run2-usage-factor/";
  const loaders::Dataset replay = loaders::load_slurm(run + "dump", "", run + "sacct.txt");
  EXPECT_EQ(replay.policy.slurm_priority.usage_factor, (std::vector<double>{0, 1}));
}

// `sshare -a -P -l` as the recorded fair-share run's dump holds it: root's own user under root, accounts
// chem (shares 1) and phys (2) each with user root; the root line itself is the tree's root, left out.
TEST(SlurmSettings, SshareGivesTheAssociationTree) {
  std::vector<std::string> warnings;
  const std::vector<SlurmAssociation> tree =
      loaders::slurm::read_sshare(kData + "run16-fairshare/dump/sshare.txt", warnings);
  ASSERT_EQ(tree.size(), 5u);
  EXPECT_EQ(tree[0].account, "root");
  EXPECT_EQ(tree[0].user, "root");
  EXPECT_EQ(tree[1].account, "chem");
  EXPECT_EQ(tree[1].user, "");
  EXPECT_EQ(tree[1].parent, "root");
  EXPECT_EQ(tree[3].account, "phys");
  EXPECT_EQ(tree[3].shares, 2);
  EXPECT_EQ(tree[4].user, "root");
  EXPECT_TRUE(warnings.empty());
  // nested accounts, Fairshare=parent, and what is refused
  const std::string nested = temp_file("sshare-nested.txt",
                                       "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\n"
                                       "root|||0.000000|0|1.000000|\n"
                                       " science||3|1.0|0|0|\n"
                                       "  physics||parent|1.0|0|0|\n"
                                       "   physics|alice|1|1.0|0|0|0.5\n");
  const std::vector<SlurmAssociation> deep = loaders::slurm::read_sshare(nested, warnings);
  fs::remove(nested);
  ASSERT_EQ(deep.size(), 3u);
  EXPECT_EQ(deep[1].account, "physics");
  EXPECT_EQ(deep[1].parent, "science");
  EXPECT_EQ(deep[2].user, "alice");
  ASSERT_EQ(warnings.size(), 1u) << "Fairshare=parent is read as 1";
  for (const char* bad : {"Account|User|RawShares\nroot||\n   deep||1\n", "Account|User|RawShares\nroot||\n a||-1\n",
                          "Account|User\nroot|\n", "Account|User|RawShares\nroot||\n a||1|extra\n"}) {
    const std::string f = temp_file("sshare-bad.txt", bad);
    EXPECT_THROW(loaders::slurm::read_sshare(f, warnings), loaders::LoadError) << bad;
    fs::remove(f);
  }
}

// priority/multifactor's partition factor (datasets/slurm/c100-jfactor: the c100 cluster with short at
// PriorityJobFactor 5 and gpu at 2, PriorityWeightPartition 1000 and PriorityWeightJobSize 100): each job's
// priority at submit as slurmctld 22.05.8 gave it (squeue %Q of jobs pending on --begin): a partition's factor
// over the largest, 1/5 for all, amd and big (200 + job size), 2/5 for gpu; a job of several partitions shows
// its first one's (`-p short,gpu` 1000, `-p all,short` 200).
TEST(SlurmSettings, PartitionFactorAsSlurmctldGivesIt) {
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100-jfactor", kData + "c100-jfactor.jobs");
  ASSERT_TRUE(ds.policy_defaults.slurm_priority.enabled);
  EXPECT_EQ(ds.policy_defaults.slurm_priority.weight_partition, 1000);
  EXPECT_EQ(compare_submit_priorities(ds, kData + "c100-jfactor-prio.tsv"), 10u);
}

// PriorityFlags=SMALL_RELATIVE_TO_TIME on the c100 cluster (datasets/slurm/c100-size-time: PriorityWeightJobSize
// 1000000, 10 jobs submitted with --begin an hour on, the priority slurmctld gave each, squeue %Q): a job's CPUs,
// at least its nodes' average share, per minute of its limit, over the cluster's CPUs (-t 1 on one node: 10000,
// -t 0:30 counts as a minute, -N 8 -c 16 -t 3: 26666).
TEST(SlurmSettings, SizeRelativeToTimeAsSlurmctldGivesIt) {
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100-size-time", kData + "c100-size-time.jobs");
  ASSERT_TRUE(ds.policy_defaults.slurm_priority.size_relative_to_time);
  EXPECT_TRUE(ds.taskers.warnings.empty()) << ds.taskers.warnings.front();
  EXPECT_EQ(compare_submit_priorities(ds, kData + "c100-size-time-prio.tsv"), 10u);
}

// PriorityWeightTRES on the c100 cluster (datasets/slurm/c100-tres: CPU=1000,Mem=2000,Node=500,Billing=3000,
// partition gpu with TRESBillingWeights CPU=1.0,Mem=0.25G and amd with CPU=2.0,Node=10; 24 jobs pending on
// --begin, the priority slurmctld 22.05.8 gave each, squeue %Q): each TRES the job asks over its partition's,
// weighted and summed. `-c 1` with no --mem counts the partition's first node's memory (11, against 5 with
// --mem=100); `-N 2-4 -c 2` asks 2 CPUs, `--cpus-per-gpu=4 --gpus=2` 1; billing by the partition's weights
// (`-c 16 --mem=8000 -p gpu`: 17 of 2435) or its CPUs; a job of `-p all,gpu` its first partition's.
TEST(SlurmSettings, TresFactorsAsSlurmctldGivesThem) {
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100-tres", kData + "c100-tres.jobs");
  const SlurmMultifactor& mf = ds.policy_defaults.slurm_priority;
  ASSERT_EQ(mf.weight_tres.size(), 4u);
  EXPECT_EQ(mf.weight_tres[1], (std::pair<std::string, double>{"mem", 2000}));
  EXPECT_TRUE(ds.taskers.warnings.empty()) << ds.taskers.warnings.front();
  EXPECT_EQ(compare_submit_priorities(ds, kData + "c100-tres-prio.tsv"), 24u);
  // the same jobs as the dump's own queue, `scontrol show job` and squeue's JSON: the same priorities, and the
  // same amounts (CpusPerTres and MemPerTres read: `--cpus-per-gpu=4 --gpus=2` takes 8 CPUs, not 1)
  const std::string dir = (fs::temp_directory_path() / "colmatch-c100-tres-squeue").string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"scontrol-config.txt", "scontrol-partition.txt", "scontrol-node.txt.gz"})
    fs::copy_file(kData + "c100-tres/" + f, dir + "/" + f);
  fs::copy_file(kData + "c100-tres-squeue.json.gz", dir + "/squeue.json.gz");
  for (const std::string& queue_dir : {kData + "c100-tres", dir}) {
    SCOPED_TRACE(queue_dir);
    const loaders::Dataset queue = loaders::load_slurm(queue_dir, "");
    ASSERT_EQ(queue.jobs.size(), 24u);
    EXPECT_EQ(compare_submit_priorities(queue, kData + "c100-tres-prio.tsv"), 24u);
    ASSERT_EQ(queue.catalog.consumables().size(), ds.catalog.consumables().size());
    for (size_t k = 0; k < ds.catalog.consumables().size(); ++k)
      for (uint32_t j = 0; j < 24; ++j) {
        const double a = ds.jobs.amount.at(k, j), b = queue.jobs.amount.at(k, j);
        EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << "job " << j + 1 << ", consumable " << k;
      }
  }
  fs::remove_all(dir);
}

// A GRES TRES (slurmctld needs slurmdbd for one, so not asked of the oracle): the job's count in all (per node
// x nodes, or --gpus's) over the partition's nodes' (gpu: 10 nodes of 4 a100 and 10 of 2 v100, 60 GPUs);
// a typed one over that type's (40 a100).
TEST(SlurmSettings, GresTresFactorIsTheJobsCountOverItsPartitions) {
  loaders::Dataset ds = loaders::load_slurm(kData + "c100-tres", kData + "c100-tres.jobs");
  SlurmMultifactor& mf = ds.policy_defaults.slurm_priority;
  mf.weight_tres = {{"gres/gpu", 6000}, {"gres/gpu:a100", 400}, {"energy", 1e6}};
  SlurmPriority prio = SlurmPriority::of_farm(ds.catalog, ds.taskers, ds.jobs, ds.policy_defaults);
  auto tres = [&](uint32_t line) { return prio.factors(line - 1, 0).tres; };
  EXPECT_DOUBLE_EQ(tres(7), 6000.0 * 2 / 60) << "--gres=gpu:2";
  EXPECT_DOUBLE_EQ(tres(8), 6000.0 * 4 / 60 + 400.0 * 4 / 40) << "--gres=gpu:a100:4";
  EXPECT_DOUBLE_EQ(tres(9), 6000.0 * 2 / 60) << "-N 2 --gres=gpu:1";
  EXPECT_DOUBLE_EQ(tres(20), 6000.0 * 2 / 60) << "--gpus=2 (the job's, not a node's)";
  EXPECT_DOUBLE_EQ(tres(1), 0) << "no GPU; energy counts 0 for a job that has not run";
}

// PriorityWeightTRES's syntax as slurm_get_tres_weight_array reads it: types in any case, a unit divides by
// 1024 per step above the base unit (MB for mem), and what slurmctld refuses to start with is refused.
TEST(SlurmSettings, TresWeightsAsSlurmReadsThem) {
  using W = std::vector<std::pair<std::string, double>>;
  EXPECT_EQ(loaders::slurm::parse_tres_weights("CPU=1000,Mem=0.25G,GRES/gpu:a100=2,fs/disk=1"),
            (W{{"cpu", 1000}, {"mem", 0.25 / 1024}, {"gres/gpu:a100", 2}, {"fs/disk", 1}}));
  EXPECT_EQ(loaders::slurm::parse_tres_weights("node=2K,mem=3M"), (W{{"node", 2.0 / 1024}, {"mem", 3}}));
  EXPECT_TRUE(loaders::slurm::parse_tres_weights("(null)").empty());
  for (const char* bad : {"cpu", "cpu=", "=3", "cores=1", "gres=2", "fs/tmp=1", "cpu=1X", "cpu=-1", "cpu=1,,mem=2"})
    EXPECT_THROW(loaders::slurm::parse_tres_weights(bad), std::invalid_argument) << bad;
  SimConfig p;
  EXPECT_NE(loaders::slurm::apply_setting("PriorityWeightTRES", "license/matlab=10,cpu=1", p), "");
  EXPECT_EQ(p.slurm_priority.weight_tres.size(), 2u);
}

// PriorityWeightAssoc (datasets/slurm/run2-assoc: slurmctld 22.05.8 with slurmdbd, PriorityWeightAssoc 1000, the
// other weights 0; accounts phys (Priority 100), chem (30, its user root 50), bio under phys (inherits 100, its
// user's association in partition all 70), eng and root (none); the dump with 7 jobs pending, each -A one of
// them, and the priority slurmctld gave each): a job's association (its account, user and partition, else its
// account and user) priority over the largest, 100: phys 1000, chem 500, bio 700, eng and root 1 (at least 1).
TEST(SlurmSettings, AssociationFactorAsSlurmctldGivesIt) {
  const loaders::Dataset ds = loaders::load_slurm(kData + "run2-assoc", "");
  const SlurmMultifactor& mf = ds.policy_defaults.slurm_priority;
  ASSERT_EQ(mf.weight_assoc, 1000);
  ASSERT_EQ(mf.assoc_factor.size(), ds.jobs.size());
  SlurmPriority prio = SlurmPriority::of_farm(ds.catalog, ds.taskers, ds.jobs, ds.policy_defaults);
  std::ifstream in(kData + "run2-assoc-prio.tsv");
  size_t compared = 0;
  for (std::string line; std::getline(in, line); ++compared) {
    const std::vector<std::string> f = tsv_fields(line, 2);
    uint32_t j = 0;
    while (j < ds.jobs.size() && ds.jobs.id[j] != f[0]) ++j;
    ASSERT_LT(j, ds.jobs.size()) << line;
    prio.submitted(j, ds.jobs.submit[j]);
    EXPECT_EQ(prio.priority(j), std::stod(f[1])) << line;
  }
  EXPECT_EQ(compared, 7u);
}

// sacctmgr's association table: an empty Priority is 0; bad lines name file, line and field.
TEST(SlurmSettings, AssociationPrioritiesAsSacctmgrPrintsThem) {
  const std::string f = (fs::temp_directory_path() / "colmatch-assoc.txt").string();
  std::ofstream(f) << "Account|User|Partition|Priority\nroot|||\nphys|||100\nphys|root|all|7\n";
  const auto read = loaders::slurm::read_assoc_priorities(f);
  EXPECT_EQ(read.size(), 3u);
  EXPECT_EQ(read.at({"root", "", ""}), 0);
  EXPECT_EQ(read.at({"phys", "root", "all"}), 7);
  for (const char* bad :
       {"Account|User|Priority\nphys||1\n", "Account|User|Partition|Priority\nphys|||-1\n",
        "Account|User|Partition|Priority\nphys|||x\n", "Account|User|Partition|Priority\n|u||1\n",
        "Account|User|Partition|Priority\nphys|||1\nphys|||2\n", "Account|User|Partition|Priority\nphys||1\n"}) {
    std::ofstream(f) << bad;
    EXPECT_THROW(loaders::slurm::read_assoc_priorities(f), loaders::LoadError) << bad;
  }
  fs::remove(f);
}

// sshare's RawUsage is the replay's starting usage for the dump's own queue or a jobs file: the fair-share
// factors of the first calculation are then sshare's FairShare column, printed at the same moment (the dumps
// of the recorded runs, taken at their end). Fair Tree (run16-fairshare: root's own user 1, phys 2/3, chem
// 1/3: ranks, exactly); the classic formula (run16-classic, accounts two deep) in sshare's order. For
// sacct's records the usage starts at 0.
TEST(SlurmSettings, SshareUsageStartsTheReplayOfTheDumpsQueue) {
  auto first_factors = [](const std::string& run, const std::vector<std::string>& accounts) {
    std::string lines;
    for (size_t k = 0; k < accounts.size(); ++k)
      lines += fmt::format(
          "JobId={} UserId=root(0) Account={} JobState=PENDING NumCPUs=1 NumNodes=1 "
          "TRES=cpu=1,node=1 SubmitTime=2026-11-29T12:00:00\n",
          k + 1, accounts[k]);
    const std::string jobs = temp_file("fs-jobs.txt", lines);
    const loaders::Dataset ds = loaders::load_slurm(kData + run + "/dump", jobs);
    fs::remove(jobs);
    SlurmPriority prio = SlurmPriority::of_farm(ds.catalog, ds.taskers, ds.jobs, ds.policy_defaults);
    const double t = ds.policy_defaults.slurm_priority.calc_phase;
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) prio.submitted(j, t - 1);  // (pending at the calculation)
    prio.advance(t);
    std::vector<double> out;
    for (uint32_t j = 0; j < ds.jobs.size(); ++j) out.push_back(prio.factors(j, t).fairshare);
    return out;
  };
  const std::vector<double> tree = first_factors("run16-fairshare", {"root", "phys", "chem"});
  EXPECT_EQ(tree, (std::vector<double>{1.0, 2.0 / 3, 1.0 / 3}));
  // (classic: sshare's FairShare 1, 0.529, 0.344, 0.156, 0.090 come from the accounts' effective usage as it
  // stood before the last calculation charged its running jobs, which the end's RawUsage no longer shows: the
  // order is theirs, the values 1, 0.573, 0.330, 0.165, 0.072)
  const std::vector<double> classic = first_factors("run16-classic", {"root", "eng", "science", "chem", "phys"});
  EXPECT_EQ(classic[0], 1.0);
  for (size_t k = 1; k < 5; ++k) EXPECT_LT(classic[k], classic[k - 1]) << k;
  // a replay of sacct's records starts with none
  const loaders::Dataset replay =
      loaders::load_slurm(kData + "run16-fairshare/dump", "", kData + "run16-fairshare/sacct.txt");
  for (const SlurmAssociation& a : replay.policy.slurm_priority.associations) EXPECT_EQ(a.usage, 0) << a.account;
}

// Fair share charges a running job's billable TRES a second (priority_multifactor.c _apply_new_usage,
// calc_job_billable_tres: the partition's TRESBillingWeights over what it holds, not truncated), its CPUs
// without them: on c100-tres's gpu partition (CPU=1.0,Mem=0.25G) `-c 4 --mem=100000` bills 28.41 a second and
// `-c 4 --mem=100` 4.02, so after both ran alike the second's account ranks first (Fair Tree); charged by
// CPUs they would tie.
TEST(SlurmSettings, FairShareChargesTheBillableTres) {
  const std::string jobs = temp_file("billable.jobs",
                                     "-A a -p gpu -c 4 --mem=100000\n-A b -p gpu -c 4 --mem=100\n"
                                     "-A c -p all -c 4 --mem=100000\n");
  loaders::Dataset ds = loaders::load_slurm(kData + "c100-tres", jobs);
  fs::remove(jobs);
  SlurmMultifactor& mf = ds.policy_defaults.slurm_priority;
  ASSERT_EQ(mf.billable.size(), 3u);
  EXPECT_DOUBLE_EQ(mf.billable[0], 4 + 100000 * 0.25 / 1024);
  EXPECT_DOUBLE_EQ(mf.billable[1], 4 + 100 * 0.25 / 1024);
  EXPECT_EQ(mf.billable[2], 0) << "partition all has no weights: its CPUs";
  mf.accounting = true;  // (the oracle ran without slurmdbd: no decay thread, no usage)
  mf.weight_fairshare = 1000;
  auto ranks = [&] {
    SlurmPriority prio = SlurmPriority::of_farm(ds.catalog, ds.taskers, ds.jobs, ds.policy_defaults);
    const double t0 = mf.calc_phase;
    for (uint32_t j = 0; j < 2; ++j) {
      prio.submitted(j, t0);
      prio.started(j, t0);
    }
    prio.advance(t0 + 3 * mf.calc_period);
    return std::pair{prio.factors(0, t0).fairshare, prio.factors(1, t0).fairshare};
  };
  const auto [a, b] = ranks();
  EXPECT_LT(a, b);
  mf.billable.clear();
  const auto [a_cpus, b_cpus] = ranks();
  EXPECT_EQ(a_cpus, b_cpus) << "charged by CPUs alone they tie";
}

// ... and a job that takes its nodes whole is given, and billed for, every CPU of them (slurmctld's
// total_cpus; "#CPUs=16" for `-c 1` on a 16-CPU node in datasets/slurm/c100-excl's log). On run16-fairshare's
// 16 nodes of 4 CPUs (usage from nothing): a's --exclusive job asks 8 CPUs on 8 nodes and is given 32, b's
// asks 16 on the others, each running its time limit; of the two 12-node jobs submitted a minute later, b's starts
// first when they end (a billed 32 a second, b 16); billed by what a asked, a's would. The same with the
// partition's TRESBillingWeights=CPU=1.0 (a's billable TRES as given: 32).
TEST(SlurmSettings, AJobTakingNodesWholeIsBilledForThem) {
  for (const bool weights : {false, true}) {
    const fs::path dir = fs::temp_directory_path() / ("colmatch-slurm-whole-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const char* f : {"scontrol-config.txt", "scontrol-node.txt", "scontrol-partition.txt"})
      fs::copy_file(kData + "run16-fairshare/dump/" + f, dir / f);
    if (weights) {
      std::ifstream in(dir / "scontrol-partition.txt");
      std::string line;
      std::getline(in, line);
      in.close();
      std::ofstream(dir / "scontrol-partition.txt") << line << " TRESBillingWeights=CPU=1.0\n";
    }
    const std::string jobs = temp_file("whole.jobs",
                                       "-A a --exclusive -N 8 -c 1 -t 600\n-A b -N 8 -c 2 -t 600\n"
                                       "-A a -N 12 -c 4 -t 10\n-A b -N 12 -c 4 -t 10\n");
    loaders::Dataset ds = loaders::load_slurm(dir.string(), jobs);
    fs::remove_all(dir);
    fs::remove(jobs);
    ASSERT_TRUE(ds.policy.slurm_priority.enabled);
    EXPECT_EQ(ds.policy.slurm_priority.whole_node, (std::vector<uint8_t>{1, 0, 0, 0}));
    EXPECT_EQ(ds.policy.slurm_priority.whole_node_billing.size(), weights ? 4u : 0u);
    for (uint32_t j = 0; j < 4; ++j) {  // each runs its limit; the 12-node ones come a minute later
      ds.jobs.runtime.set(j, (j < 2 ? 600 : 10) * 60.0);
      ds.jobs.submit.set(j, ds.jobs.submit[0] + (j < 2 ? 0 : 60));
    }
    const SimResult r = simulate(ds.catalog, ds.taskers, ds.jobs, ds.policy, kernels::active());
    const double t0 = r.start[0];
    EXPECT_EQ(r.start[1], t0);
    EXPECT_EQ(r.start[3], t0 + 600 * 60) << "b's job first: a was billed its nodes' 32 CPUs; weights " << weights;
    EXPECT_EQ(r.start[2], t0 + 610 * 60);
  }
}

// ... and under TRESBillingWeights such a job is billed for what it is given: every CPU of its nodes, and
// its memory as asked per node or per CPU (of every CPU it is given), or, asked none, every MB of its nodes.
// slurmctld 22.05.8 (bench/peers/slurm_oracle.sh with BILLING="short:CPU=1.0,Mem=0.25G" and
// OVERSUB="short=EXCLUSIVE"; datasets/slurm/c100-billing-excl-slurm.tsv: each job's nodes and its TRES with
// billing once allocated): `-c 1` on n009 (16 CPUs, 256000 MB) billing 78 (16 + 250 x 0.25); `-c 2
// --mem=1000` 16; `-N 2 -c 1 --mem=2000` on n006 and n033 144 (128 + 16 CPUs + 4000 MB); `-n 3
// --mem-per-cpu=100` on n003 32 (32 CPUs + 3200 MB); `--exclusive -c 1` in `all` (no weights) its 16 CPUs.
TEST(SlurmSettings, AJobTakingNodesWholeIsBilledForWhatItIsGivenUnderWeights) {
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100-billing-excl", kData + "c100-billing-excl.jobs");
  const SlurmMultifactor& mf = ds.policy_defaults.slurm_priority;
  ASSERT_EQ(ds.jobs.size(), 5u);
  ASSERT_EQ(mf.whole_node, (std::vector<uint8_t>{1, 1, 1, 1, 1}));
  ASSERT_EQ(mf.whole_node_billing.size(), 5u);
  const Capacity configured = Capacity::configured(ds.catalog, ds.taskers);
  auto on = [&](std::initializer_list<const char*> names) {
    std::vector<Allocation> out;
    for (const char* n : names)
      for (uint32_t x = 0; x < ds.taskers.size(); ++x)
        if (ds.taskers.names[x] == n) out.push_back({x, 1});
    EXPECT_EQ(out.size(), names.size());
    return out;
  };
  const std::vector<std::vector<Allocation>> given = {on({"n009"}), on({"n024"}), on({"n006", "n033"}), on({"n048"}),
                                                      on({"n003"})};
  const double billed[] = {78, 16, 144, 16, 32};  // (scontrol's billing=, truncated)
  // the CPUs and MB its TRES= showed it given (250G, 1000M, 4000M, 3200M), weighed as the partition says
  const double cpus[] = {16, 16, 144, 16, 32}, mb[] = {256000, 1000, 4000, 64000, 3200};
  for (uint32_t j = 0; j < 5; ++j) {
    if (j == 3) {  // `all` has no weights: its CPUs
      EXPECT_FALSE(mf.whole_node_billing[j].given);
      EXPECT_EQ(slurm_whole_node_cpus(given[j], configured, ds.policy_defaults.fit_consumable), billed[j]);
      continue;
    }
    ASSERT_TRUE(mf.whole_node_billing[j].given) << j;
    const double b = slurm_whole_node_billable(mf.whole_node_billing[j], given[j], configured,
                                               ds.policy_defaults.fit_consumable, mf.mem_consumable);
    EXPECT_EQ(std::floor(b), billed[j]) << "job " << j + 1 << ": " << b;
    EXPECT_NEAR(b, cpus[j] + mb[j] * 0.25 / 1024, 1e-9) << "job " << j + 1;  // fair share charges it whole
  }
}

// PriorityFlags=MAX_TRES on the same cluster and jobs (datasets/slurm/c100-tres-max): a billing TRES is the
// largest weighted node TRES plus the others (gpu's CPU=1.0,Mem=0.25G: `-c 16 --mem=8000` bills 16, not 17,
// of a partition's 1248; amd's CPU=2.0,Node=10: `-c 3` bills 6 of 7808): 24 of 24 as slurmctld gave them.
TEST(SlurmSettings, TresBillingUnderMaxTresAsSlurmctldGivesIt) {
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100-tres-max", kData + "c100-tres.jobs");
  ASSERT_TRUE(ds.policy_defaults.slurm_priority.max_tres);
  EXPECT_TRUE(ds.taskers.warnings.empty()) << ds.taskers.warnings.front();
  EXPECT_EQ(compare_submit_priorities(ds, kData + "c100-tres-max-prio.tsv"), 24u);
}

// PriorityFlags=NO_NORMAL_ALL on the c100 cluster (datasets/slurm/c100-no-normal: c100-tres's weights and billing,
// PriorityWeightPartition=1000 with short at PriorityJobFactor 5 and gpu at 2, PriorityWeightJobSize=100; the 24
// jobs of c100-tres.jobs and the 10 of c100-jfactor.jobs pending on --begin, the priority slurmctld 22.05.8 gave
// each): the partition factor is the PriorityJobFactor as it is (5000 for -p short), each TRES factor the count
// asked as it is (memory in MB: `--mem=500G` on one node 1,024,000,000 of job 14's 1,000,129,500), not over the
// largest or the partition's.
TEST(SlurmSettings, NoNormalFactorsAsSlurmctldGivesThem) {
  const loaders::Dataset ds = loaders::load_slurm(kData + "c100-no-normal", kData + "c100-no-normal.jobs");
  const SlurmMultifactor& mf = ds.policy_defaults.slurm_priority;
  EXPECT_TRUE(mf.no_normal_part && mf.no_normal_qos && mf.no_normal_assoc && mf.no_normal_tres) << "NO_NORMAL_ALL";
  EXPECT_TRUE(ds.taskers.warnings.empty()) << ds.taskers.warnings.front();
  EXPECT_EQ(compare_submit_priorities(ds, kData + "c100-no-normal-prio.tsv"), 34u);
}
