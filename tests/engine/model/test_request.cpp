#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "engine/model/jobs.hpp"
#include "engine/model/request.hpp"

using namespace colmatch;

namespace {

Catalog catalog() {
  Catalog c;
  auto add = [&](const char* n, AttrType t, Relop r, bool cons = false, const char* sc = "") {
    AttributeDef d;
    d.name = n;
    d.shortcut = sc;
    d.type = t;
    d.relop = r;
    d.consumable = cons;
    c.add(d);
  };
  add("arch", AttrType::String, Relop::EQ, false, "a");
  add("os", AttrType::CString, Relop::EQ);
  add("site", AttrType::ReString, Relop::EQ);
  add("mem", AttrType::Memory, Relop::LE, true);
  add("speed", AttrType::Double, Relop::GE);
  add("ssd", AttrType::Boolean, Relop::EQ);
  AttributeDef hidden;
  hidden.name = "secret";
  hidden.requestable = Requestable::No;
  c.add(hidden);
  return c;
}

std::string canon(std::string_view text) {
  const Catalog c = catalog();
  return canonical_text(parse_request(text, c), c);
}

TEST(Request, ParsesClausesAndPrecedence) {
  EXPECT_EQ(canon(""), "true");
  EXPECT_EQ(canon("arch==lx-amd64"), "arch==\"lx-amd64\"");
  // && binds tighter than ||; children are listed in canonical order (by their text: names first)
  EXPECT_EQ(canon("speed>2 || a==x && mem>=4G"), "(arch==\"x\" && mem>=4294967296) || speed>2");
  EXPECT_EQ(canon("a==x && (mem>=4G || speed>2)"), "arch==\"x\" && (mem>=4294967296 || speed>2)");
  EXPECT_EQ(canon("!(arch==x)"), "!(arch==\"x\")");
}

// Every canonical text parses back: an empty AND is written `true` and an empty OR `false` (an
// Accelerator OR alternative that expanded to nothing), and the parser reads them as those constants,
// unless an attribute of that name is followed by a relop.
TEST(Request, TrueAndFalseConstantsParseBack) {
  const Catalog c = catalog();
  Request alt;  // (true || speed>2) && !(false) built as the Accelerator loader builds it
  alt.kind = Request::Kind::And;
  Request any;
  any.kind = Request::Kind::Or;
  Request truth;  // an empty AND
  Request clause;
  clause.kind = Request::Kind::Clause;
  clause.clause.attr = *c.find("speed");
  clause.clause.op = Relop::GT;
  clause.clause.nums = {2};
  any.kids = {truth, clause};
  Request never;  // NOT of an empty OR
  never.kind = Request::Kind::Not;
  never.kids.push_back(Request{Request::Kind::Or, {}, {}});
  alt.kids = {any, never};
  canonicalize(alt, c);
  const std::string text = canonical_text(alt, c);
  EXPECT_NE(text.find("true"), std::string::npos) << text;
  EXPECT_NE(text.find("false"), std::string::npos) << text;
  EXPECT_EQ(canonical_text(parse_request(text, c), c), text);
  EXPECT_EQ(canon("true"), "true");
  EXPECT_EQ(canon("false"), "false");
  EXPECT_EQ(canon("!(false) && arch==x"), canon("!false && arch==x"));
  Catalog named = catalog();
  AttributeDef t;
  t.name = "true";
  t.type = AttrType::Int;
  named.add(t);
  EXPECT_EQ(canonical_text(parse_request("true==1", named), named), "true==1") << "the attribute, before a relop";
  EXPECT_EQ(canonical_text(parse_request("true", named), named), "true");
}

TEST(Request, EqualsSignUsesCatalogRelop) {
  // Grid Engine: -l mem=4G matches when 4G <= tasker's mem, i.e. tasker mem >= 4G.
  EXPECT_EQ(canon("mem=4G"), "mem>=4294967296");
  // speed has relop >= in this catalog: speed=2 matches when 2 >= tasker speed.
  EXPECT_EQ(canon("speed=2"), "speed<=2");
  EXPECT_EQ(canon("arch=x"), "arch==\"x\"");
}

TEST(Request, CanonicalFormIsOrderAndDuplicateFree) {
  EXPECT_EQ(canon("speed>1 && arch==x"), canon("arch==x && speed>1"));
  EXPECT_EQ(canon("arch==x && arch==x"), canon("arch==x"));
  EXPECT_EQ(canon("(arch==x && (speed>1 && ssd==true))"), canon("ssd==1 && arch==x && speed>1"));
  EXPECT_EQ(canon("!!(arch==x)"), canon("arch==x"));
  EXPECT_EQ(canon("arch=={b, a, b}"), "arch=={\"a\",\"b\"}");
  EXPECT_EQ(canon("os==RHEL9"), canon("os==rhel9")) << "cstring folds case";
  EXPECT_NE(canon("arch==X"), canon("arch==x")) << "string keeps case";
  EXPECT_EQ(canon("mem>=1024M"), canon("mem>=1G"));
}

TEST(Request, QuotedValuesAndPatterns) {
  EXPECT_EQ(canon("site==\"*.ch|*.fr\""), "site==\"*.ch|*.fr\"");
  EXPECT_EQ(canon("site==*.ch|*.fr"), "site==\"*.ch|*.fr\"") << "a single | stays in a bare value";
  EXPECT_EQ(canon("arch==\"a b\""), "arch==\"a b\"");
}

void expect_error(std::string_view text, const char* words, size_t column = 0) {
  const Catalog c = catalog();
  try {
    parse_request(text, c);
    FAIL() << "accepted: " << text;
  } catch (const RequestError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    if (column) {
      EXPECT_EQ(e.column, column) << e.what();
    }
  }
}

TEST(Request, ErrorsNameTheProblemAndColumn) {
  expect_error("arch==x && gpu==1", "unknown attribute 'gpu'", 12);
  expect_error("arch<x", "allows only == and !=", 5);
  expect_error("ssd!=true", "boolean allows only ==");
  expect_error("mem>=4X", "not a memory value");
  expect_error("speed>fast", "not a double value");
  expect_error("secret==1", "not requestable");
  expect_error("(arch==x", "expected ')'");
  expect_error("arch x", "expected a relop");
  expect_error("arch==x &&", "expected an attribute name");
  expect_error("speed<{1,2}", "a value list takes only == or !=");
  expect_error("arch==\"x", "unterminated string");
  expect_error("arch==x )", "unexpected");
}

TEST(Request, MentionedAttributes) {
  const Catalog c = catalog();
  EXPECT_EQ(mentioned_attributes(parse_request("speed>1 || (arch==x && !(speed<3))", c)),
            (std::vector<uint32_t>{0, 4}));
}

// The parser recurses once per parenthesis or '!': a bound keeps one hostile request from ending the
// run (it is rejected like any bad request).
TEST(Request, NestingIsBoundedNotACrash) {
  const Catalog c = catalog();
  std::string ok;
  for (int i = 0; i < 128; ++i) ok += "(";
  ok += "arch==x";
  for (int i = 0; i < 128; ++i) ok += ")";
  EXPECT_NO_THROW(parse_request(ok, c)) << "128 levels are allowed";
  expect_error("(" + ok + ")", "nest deeper than 128 levels");
  expect_error(std::string(100000, '!') + "arch==x", "nest deeper than 128 levels");
  expect_error(std::string(10000, '(') + "arch==x", "nest deeper than 128 levels");
  std::string alternating = "arch==x";
  for (int i = 0; i < 200; ++i) alternating = "(" + alternating + (i % 2 ? " && " : " || ") + "speed>1)";
  expect_error(alternating, "nest deeper than 128 levels");
}

// The canonical form as first written: every kid's text computed afresh at every level (O(size x
// depth^2)); canonicalize, which computes each text once, must give the same tree and text.
void reference_canonicalize(Request& r, const Catalog& catalog) {
  if (r.kind == Request::Kind::Clause) {
    auto& n = r.clause.nums;
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
    auto& s = r.clause.strs;
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    return;
  }
  for (auto& k : r.kids) reference_canonicalize(k, catalog);
  if (r.kind == Request::Kind::Not) {
    if (r.kids[0].kind == Request::Kind::Not) {
      Request inner = std::move(r.kids[0].kids[0]);
      r = std::move(inner);
    }
    return;
  }
  std::vector<Request> flat;
  for (auto& k : r.kids) {
    if (k.kind == r.kind) {
      for (auto& kk : k.kids) flat.push_back(std::move(kk));
    } else {
      flat.push_back(std::move(k));
    }
  }
  std::vector<std::pair<std::string, Request>> keyed;
  for (auto& k : flat) keyed.emplace_back(canonical_text(k, catalog), std::move(k));
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  keyed.erase(std::unique(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
              keyed.end());
  r.kids.clear();
  for (auto& [key, k] : keyed) r.kids.push_back(std::move(k));
  if (r.kids.size() == 1) {
    Request only = std::move(r.kids[0]);
    r = std::move(only);
  }
}

// A random tree with what canonicalization has to undo: groups inside groups of the same kind, groups
// of one kid, double negations, duplicate kids and values, empty groups.
Request random_tree(std::mt19937_64& rng, int depth) {
  Request r;
  const auto pick = rng() % 10;
  if (depth == 0 || pick < 3) {
    r.kind = Request::Kind::Clause;
    r.clause.attr = static_cast<uint32_t>(rng() % 2 ? 0 : 4);  // arch (string) or speed (double)
    r.clause.op = rng() % 2 ? Relop::EQ : Relop::NE;
    const auto n = 1 + rng() % 3;
    for (uint64_t i = 0; i < n; ++i) {
      if (r.clause.attr == 0) r.clause.strs.push_back(std::string(1, static_cast<char>('a' + rng() % 3)));
      else r.clause.nums.push_back(static_cast<double>(rng() % 3));
    }
    return r;
  }
  if (pick < 5) {
    r.kind = Request::Kind::Not;
    r.kids.push_back(random_tree(rng, depth - 1));
    return r;
  }
  r.kind = pick < 8 ? Request::Kind::And : Request::Kind::Or;
  const auto n = rng() % 4;  // 0 to 3 kids
  for (uint64_t i = 0; i < n; ++i) r.kids.push_back(random_tree(rng, depth - 1));
  return r;
}

TEST(Request, CanonicalFormEqualsTheReferenceOnRandomTrees) {
  const Catalog c = catalog();
  std::mt19937_64 rng(12);
  size_t flattened_or_collapsed = 0;
  for (int i = 0; i < 20000; ++i) {
    const Request tree = random_tree(rng, 1 + static_cast<int>(rng() % 7));
    Request fast = tree, ref = tree;
    canonicalize(fast, c);
    reference_canonicalize(ref, c);
    const std::string want = canonical_text(ref, c);
    ASSERT_EQ(canonical_text(fast, c), want) << "tree " << i << ": " << canonical_text(tree, c);
    // and the trees are alike: canonicalizing again changes nothing
    Request again = fast;
    canonicalize(again, c);
    ASSERT_EQ(canonical_text(again, c), want);
    flattened_or_collapsed += canonical_text(tree, c) != want;
  }
  EXPECT_GT(flattened_or_collapsed, 5000u) << "the trees exercise the rewriting";
}

// Issue 12: string values and patterns are bounded (kMaxStringValue bytes): a longer one rejects the job
// with the value's column, in a list too; the bound itself is accepted.
TEST(Request, StringValuesAreBounded) {
  const Catalog c = catalog();
  EXPECT_NO_THROW(parse_request("site==\"" + std::string(kMaxStringValue, '*') + "\"", c));
  const std::string big(kMaxStringValue + 1, 'x');
  expect_error("arch==" + big, "a value of 65537 bytes: at most 65536 are accepted", 7);
  expect_error("os=={a, " + big + "}", "at most 65536 are accepted", 9);
  expect_error("speed>1 && site==\"" + big + "\"", "attribute 'site'", 18);
}

// JobBuilder::intern / set_request_index: jobs sharing one built expression share one interned request
// (its canonical form computed once); an index intern() did not return is refused.
TEST(Request, InternedRequestsAreShared) {
  const Catalog cat = catalog();
  JobBuilder jb(cat);
  const uint32_t idx = jb.intern(parse_request("speed>=8 && arch==x86", cat));
  EXPECT_EQ(jb.intern(parse_request("arch==x86 && speed>=8", cat)), idx) << "the same canonical form";
  for (int i = 0; i < 3; ++i) {
    jb.add("j" + std::to_string(i), "u", "g", 0, 0);
    jb.set_request_index(idx);
  }
  EXPECT_THROW(jb.set_request_index(idx + 7), ValueError);
  const JobTable t = std::move(jb).build();
  for (uint32_t j = 0; j < 3; ++j) EXPECT_EQ(t.request[j], idx);
  EXPECT_EQ(t.request_text[idx], "arch==\"x86\" && speed>=8");
}

// JobBuilder::add_copies (how the Accelerator loader adds a million jobs): each copy equals a job built
// field by field with its prototype's owner, group, request, amounts and note and its own id and times,
// in a table whose dictionaries and requests it maps (the prototypes' table interned them in another
// order); the jobs come as pieces of columns (of uneven sizes, one empty) added in order; a bad prototype
// index, time, id column or column length is refused before any job is added.
TEST(Request, CopiesOfPrototypesEqualJobsBuiltFieldByField) {
  const Catalog cat = catalog();
  const uint32_t mem = *cat.find("mem");
  JobBuilder protos(cat);
  protos.add("", "alice", "phys", 0, 0);
  protos.set_request(parse_request("speed>=8", cat));
  protos.set_amount(mem, 2048);
  protos.add("", "bob", "chem", 0, 0);
  protos.set_request(parse_request("arch==x86", cat));
  protos.set_note(1, "depth limit");
  const JobTable pt = std::move(protos).build();

  JobBuilder by_field(cat), by_copy(cat);
  by_field.add("first", "carol", "bio", 0, 0);  // a job before: dictionaries and requests differ in order
  by_field.set_request(parse_request("arch==x86 && speed>=1", cat));
  by_copy.add("first", "carol", "bio", 0, 0);
  by_copy.set_request(parse_request("arch==x86 && speed>=1", cat));
  // the jobs' own columns, cut into pieces
  struct Columns {
    std::vector<uint32_t> like, id_end;
    std::string id_text;
    std::vector<double> submit, runtime, walltime;
    JobBuilder::CopiedJobs view() const { return {like, id_text, id_end, submit, runtime, walltime}; }
  };
  std::vector<Columns> pieces(4);
  const size_t cut[] = {0, 7000, 7000, 12001, 20000};  // piece 1 is empty
  std::mt19937 rng(3);
  for (size_t i = 0; i < 20000; ++i) {  // more than one parallel grain
    size_t k = 0;
    while (i >= cut[k + 1]) ++k;
    // piece 2 gives no walltimes (an empty column: every one NaN), piece 3 no submit times (all 0)
    const uint32_t p = rng() % 2;
    const double submit = k == 3 ? 0.0 : static_cast<double>(i), runtime = rng() % 100,
                 walltime = k != 2 && i % 3 ? 200.0 : std::nan("");
    const std::string id = "j" + std::to_string(i);
    by_field.add(id, p ? "bob" : "alice", p ? "chem" : "phys", 0, submit);
    by_field.set_request(parse_request(p ? "arch==x86" : "speed>=8", cat));
    if (!p) by_field.set_amount(mem, 2048);
    if (p) by_field.set_note(static_cast<uint32_t>(by_field.size() - 1), "depth limit");
    by_field.set_times(runtime, walltime);
    Columns& c = pieces[k];
    c.like.push_back(p);
    c.id_text += id;
    c.id_end.push_back(static_cast<uint32_t>(c.id_text.size()));
    if (k != 3) c.submit.push_back(submit);
    c.runtime.push_back(runtime);
    if (k != 2) c.walltime.push_back(walltime);
  }
  ASSERT_TRUE(pieces[1].like.empty());
  ASSERT_TRUE(pieces[2].walltime.empty() && pieces[3].submit.empty() && !pieces[3].like.empty());
  auto views = [](const std::vector<Columns>& cs) {
    std::vector<JobBuilder::CopiedJobs> v;
    for (const Columns& c : cs) v.push_back(c.view());
    return v;
  };
  auto refused = [&](auto change, const char* what) {
    std::vector<Columns> bad = pieces;
    change(bad);
    try {
      by_copy.add_copies(pt, views(bad));
      ADD_FAILURE() << what << ": not refused";
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused([](auto& b) { b[2].like[5] = 2; }, "prototype").find("job j7005: no prototype 2"),
            std::string::npos);
  EXPECT_NE(refused([](auto& b) { b[3].runtime[7] = -1; }, "time").find("job j12008"), std::string::npos);
  EXPECT_NE(refused([](auto& b) { b[0].walltime[9] = INFINITY; }, "infinite").find("job j9"), std::string::npos);
  refused([](auto& b) { std::swap(b[0].id_end[3], b[0].id_end[4]); }, "ids going down");
  refused([](auto& b) { b[0].id_end.back() += 1; }, "an id past the text");
  refused([](auto& b) { b[3].runtime.pop_back(); }, "a short column");
  refused([](auto& b) { b[2].walltime.push_back(1); }, "a column of one time, not none nor one a job");
  EXPECT_EQ(by_copy.size(), 1u) << "nothing added by a refused call";
  by_copy.add_copies(pt, views(pieces));
  const JobTable want = std::move(by_field).build(), got = std::move(by_copy).build();
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.request_text, want.request_text);
  for (uint32_t j = 0; j < want.size(); ++j) {
    ASSERT_EQ(got.owners.value(got.owner[j]), want.owners.value(want.owner[j])) << j;
    ASSERT_EQ(got.groups.value(got.group[j]), want.groups.value(want.group[j])) << j;
    ASSERT_EQ(got.request[j], want.request[j]) << j;
    ASSERT_EQ(got.note[j] == kNone, want.note[j] == kNone) << j;
    ASSERT_EQ(got.submit[j], want.submit[j]);
    ASSERT_EQ(std::isnan(got.runtime[j]), std::isnan(want.runtime[j]));
    if (!std::isnan(want.runtime[j])) {
      ASSERT_EQ(got.runtime[j], want.runtime[j]);
    }
    ASSERT_EQ(std::isnan(got.walltime[j]), std::isnan(want.walltime[j])) << j;
    if (!std::isnan(want.walltime[j])) {
      ASSERT_EQ(got.walltime[j], want.walltime[j]) << j;
    }
    ASSERT_EQ(std::isnan(got.amount.at(0, j)), std::isnan(want.amount.at(0, j))) << j;
    if (!std::isnan(want.amount.at(0, j))) {
      ASSERT_EQ(got.amount.at(0, j), want.amount.at(0, j));
    }
    ASSERT_EQ(got.reject[j], kNone);
  }
}

}  // namespace
