#include "loaders/vov.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <simdjson.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "engine/hash_slots.hpp"
#include "engine/vov.hpp"
#include "loaders/errors.hpp"
#include "loaders/policy.hpp"
#include "loaders/vov_build.hpp"
#include "loaders/vov_tcl.hpp"

namespace colmatch::loaders {
namespace {

constexpr double kUnbounded = 1e18;  // VOV's MAXINT: an uncountable resource a tasker offers

// The jobs of one piece of jobs.jsonl as read on one thread, as columns: each job's kind (the index
// of what its expansion depends on: list, tool, owner, group, priority level, duration, a job
// category's; numbered by the shared KindTable, then densely), its line, and what is its own (id,
// times), laid out as JobBuilder::CopiedJobs takes them.
struct JobPiece {
  size_t first_line = 1;         // the piece's first line in the file
  std::vector<uint32_t> kind;    // per job
  std::vector<uint32_t> line;    // per job: its line in the file is first_line + line
  std::string id_text;           // the ids one after another
  std::vector<uint32_t> id_end;  // job i's id ends at id_end[i] in id_text
  std::vector<uint64_t> id_hash;
  std::vector<double> submit, runtime, walltime;  // per job, or empty while every job's is the default
  std::vector<double> duration;                   // expected_duration per job, or empty while every one is 0
  std::optional<LoadError> error;                 // the first in the piece: later lines are not read

  size_t size() const noexcept { return kind.size(); }
  /// Empties the columns, keeping room for the jobs of `bytes` of text (reserved pages that are not
  /// written cost nothing; columns that do not grow by copying): a job per 128 bytes, the ids a quarter.
  void reset(size_t bytes) {
    const size_t guess = bytes / 128;
    id_text.clear();
    id_text.reserve(bytes / 4);
    for (auto* v : {&kind, &line, &id_end}) {
      v->clear();
      v->reserve(guess);
    }
    for (auto* v : {&submit, &runtime, &walltime}) {
      v->clear();
      v->reserve(guess);
    }
    duration.clear();
    id_hash.clear();
    id_hash.reserve(guess);
  }
  std::string_view id(size_t i) const noexcept {
    const size_t from = i == 0 ? 0 : id_end[i - 1];
    return std::string_view(id_text).substr(from, id_end[i] - from);
  }
  size_t line_of(size_t i) const noexcept { return first_line + line[i]; }
};

// The fields of a job's kind as read (views into the parser's buffer, valid until the next line).
struct KindView {
  std::string_view resources, command, owner, group, priority;
  double expected_duration = 0;
  std::string_view tool = {};   // the command's (vov::tool_view)
  uint32_t timeleft_class = 0;  // which taskers TIMELEFT#<duration> keeps (see build_vov)
};

// The kind's key: each text with its length before it (no separator a text could hold). The duration is
// the job's own (JobPiece::duration): only which taskers TIMELEFT#<duration> keeps tells kinds apart
// (build_vov), so a million distinct durations do not make a million kinds.
void kind_key(const KindView& r, std::string& key) {
  const std::string_view texts[] = {r.resources, r.tool, r.owner, r.group, r.priority};
  size_t size = 0;
  for (const std::string_view t : texts) size += sizeof(uint32_t) + t.size();
  key.resize(size);  // written in place: one size for the whole key, no append per part
  char* at = key.data();
  for (const std::string_view t : texts) {
    const auto n = static_cast<uint32_t>(t.size());
    std::memcpy(at, &n, sizeof n);
    if (!t.empty()) std::memcpy(at + sizeof n, t.data(), t.size());  // an absent field's view has no data
    at += sizeof n + t.size();
  }
}

// The kind whose key (kind_key) is `key`, with the command and the duration as read: views into `key`
// and `command`.
KindView kind_of_key(std::string_view key, std::string_view command, double expected_duration) {
  std::string_view texts[5];  // resources, tool, owner, group, priority
  size_t at = 0;
  for (std::string_view& t : texts) {
    uint32_t n = 0;
    std::memcpy(&n, key.data() + at, sizeof n);
    t = key.substr(at + sizeof n, n);
    at += sizeof n + n;
  }
  return KindView{texts[0], command, texts[2], texts[3], texts[4], expected_duration, texts[1]};
}

// Whether a JSON key is the literal (its length known when compiled: no memcmp call per key).
template <size_t N>
bool is(std::string_view name, const char (&literal)[N]) noexcept {
  return name.size() == N - 1 && std::memcmp(name.data(), literal, N - 1) == 0;
}

// The kinds met so far, shared by the threads reading pieces: looked up by key, added once, numbered
// in the order they were added (numbers are made dense, in the order the file shows the kinds, once
// every piece is read). Each thread looks in a table of its own first, the shared one only for a kind
// it has not met. Both are open addressing over the keys' hashes with the keys in one string (no node
// or key allocated per kind, no list walked); the shared one is 64 shards by the hash's top bits, each
// behind its own lock.
class KindTable {
  // Keys and their numbers: open addressing over the keys' hashes, the keys one after another.
  struct KeyNumbers {
    struct Slot {
      uint64_t at = 0;  // where its key is in `keys`
      uint32_t size = 0, number = kNone;
      bool empty() const noexcept { return number == kNone; }
    };
    HashSlots<Slot> index;
    std::string keys;
    /// The number of `key` (hash `h`), or kNone with `at` the slot where add() puts it.
    uint32_t find(uint64_t h, std::string_view key, size_t& at) const {
      const Slot* s = index.find(
          h, [&](const Slot& x) { return std::string_view(keys).substr(x.at, x.size) == key; }, at);
      return s == nullptr ? kNone : s->number;
    }
    void add(size_t at, uint64_t h, std::string_view key, uint32_t number) {
      index.insert(at, h, {keys.size(), static_cast<uint32_t>(key.size()), number});  // a key is a line's
      keys.append(key);
    }
  };

 public:
  /// One thread's kinds.
  using Local = KeyNumbers;
  /// The calling thread's own table (looked up once per piece: finding it costs a search by thread).
  Local& local() { return local_.local(); }
  /// The kind's number; `mine` is the calling thread's local().
  uint32_t find_or_add(Local& mine, std::string_view key, const KindView& r) {
    const uint64_t h = std::hash<std::string_view>{}(key);
    size_t at = 0;
    if (const uint32_t number = mine.find(h, key, at); number != kNone) return number;
    const uint32_t number = find_or_add_shared(h, key, r);
    mine.add(at, h, key, number);
    return number;
  }
  /// After reading: the kinds by number (views into the table, valid while it lives unchanged).
  std::vector<KindView> by_number() const {
    std::vector<KindView> out(next_.load());
    tbb::parallel_for(size_t{0}, shards_.size(), [&](size_t s) {
      const Shard& shard = shards_[s];
      for (const Shard::Kind& k : shard.kinds)
        out[k.number] =
            kind_of_key(std::string_view(shard.table.keys).substr(k.key_at, k.key_size),
                        std::string_view(shard.commands).substr(k.command_at, k.command_size), k.expected_duration);
    });
    return out;
  }

 private:
  struct Shard {
    // A kind as added: its key in table.keys, its first job's command in `commands` (the key holds
    // the tool only), its first job's duration (the key holds it rounded up) and its number. Its
    // texts are not copied out one by one: the 1M-job farm meets 36k kinds while reading, and only
    // the kinds that expand alike need a JobResources of their own.
    struct Kind {
      uint64_t key_at, command_at;
      uint32_t key_size, command_size, number;
      double expected_duration;
    };
    std::mutex lock;
    KeyNumbers table;
    std::string commands;
    std::vector<Kind> kinds;  // in the order added
  };
  uint32_t find_or_add_shared(uint64_t h, std::string_view key, const KindView& r) {
    Shard& shard = shards_[h >> 58];
    const std::lock_guard<std::mutex> hold(shard.lock);
    size_t at = 0;
    if (const uint32_t number = shard.table.find(h, key, at); number != kNone) return number;
    const uint32_t number = next_.fetch_add(1, std::memory_order_relaxed);
    shard.kinds.push_back({shard.table.keys.size(), shard.commands.size(), static_cast<uint32_t>(key.size()),
                           static_cast<uint32_t>(r.command.size()), number, r.expected_duration});
    shard.table.add(at, h, key, number);
    shard.commands.append(r.command);  // a command is a line's: at most 64 MiB
    return number;
  }
  std::array<Shard, 64> shards_;
  std::atomic<uint32_t> next_{0};
  tbb::enumerable_thread_specific<Local> local_;
};

// The objects of a piece read as one stream of JSON documents (simdjson's parse_many: its first stage
// over a megabyte at a time, not line by line), `take(doc, line)` called for each. Returns false when the
// piece is not simply one valid object on each line that is not blank (a document that is not an object,
// is not valid, shares its line or spans lines, an error `take` throws, bytes left over), or when it
// cannot be read so (without simdjson's padding readable after it: the file's last piece; a byte order
// mark): the caller then reads it line by line, which meets the first of its errors as it would alone.
template <typename Take>
bool read_stream(const LinePiece& piece, simdjson::dom::parser& parser, Take&& take) {
  const std::string_view text = piece.text;
  if (piece.padding < simdjson::SIMDJSON_PADDING || (piece.first_line == 1 && text.starts_with("\xEF\xBB\xBF")))
    return false;
  constexpr size_t kBatch = size_t{1} << 20;  // a longer line is read line by line (CAPACITY)
#ifdef SIMDJSON_THREADS_ENABLED
  // Not a thread of simdjson's own per stream for the next batch's first stage (a thread created per
  // piece, 43 over the 1M-job farm, each with a parser of its own): the pieces keep every core busy.
  parser.threaded = false;
#endif
  simdjson::dom::document_stream docs;
  if (parser.parse_many(reinterpret_cast<const uint8_t*>(text.data()), text.size(), kBatch).get(docs)) return false;
  size_t from = 0;  // the start of the line after the last document's
  size_t line = 0;  // the piece's lines before `from`
  try {
    for (auto it = docs.begin(); it != docs.end(); ++it) {
      simdjson::dom::element doc;
      if ((*it).get(doc)) return false;
      const size_t start = it.current_index();
      if (start < from || start >= text.size() || text[start] != '{') return false;
      size_t end = text.find('\n', from);  // the first line end past the last document: a blank line's,
      for (; end < start; end = text.find('\n', end + 1)) ++line;  // or the document's own line's
      end = std::min(end, text.size());
      if (it.source().size() > end - start) return false;
      take(doc, piece.first_line + line);
      from = end + 1;
      ++line;
    }
  } catch (const LoadError&) {
    return false;
  }
  return docs.truncated_bytes() == 0;
}

void read_piece(const std::string& path, const LinePiece& piece, const vov::Wrappers& wrappers, KindTable& kinds,
                JobPiece& out) {
  KindTable::Local& my_kinds = kinds.local();
  static thread_local simdjson::dom::parser parser;
  std::string key;
  std::string numbers[6];  // a text field given as a number, as text
  out.first_line = piece.first_line;
  out.reset(piece.text.size());
  // The job of one line's document (`ln`: its line in the file). Throws LoadError.
  auto take = [&](const simdjson::dom::element& doc, size_t ln) {
    simdjson::dom::object obj;
    if (doc.get_object().get(obj)) throw LoadError(path, ln, "", "expected a JSON object");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double submit = 0, runtime = nan, walltime = nan;
    KindView r;
    std::string_view id;
    for (auto field : obj) {
      const std::string_view name = field.key;
      const simdjson::dom::element el = field.value;
      auto text = [&](std::string_view& out_text, int slot) {
        double d = 0;
        if (!el.get_string().get(out_text)) return;
        if (el.get_double().get(d)) throw LoadError(path, ln, std::string(name), "expected a string");
        numbers[slot] = fmt::format("{}", d);
        out_text = numbers[slot];
      };
      auto number = [&](double& out_num) {
        double v = 0;
        if (el.get_double().get(v) || !std::isfinite(v) || v < 0)
          throw LoadError(path, ln, std::string(name), "expected a number >= 0");
        out_num = v;
      };
      if (is(name, "id")) text(id, 0);
      else if (is(name, "resources")) text(r.resources, 1);
      else if (is(name, "command")) text(r.command, 2);
      else if (is(name, "owner")) text(r.owner, 3);
      else if (is(name, "group")) text(r.group, 4);
      else if (is(name, "priority")) text(r.priority, 5);
      else if (is(name, "expected_duration")) number(r.expected_duration);
      else if (is(name, "submit")) number(submit);
      else if (is(name, "runtime")) number(runtime);
      else if (is(name, "walltime")) number(walltime);
      else throw LoadError(path, ln, std::string(name), "unknown key");
    }
    if (id.empty()) throw LoadError(path, ln, "id", "a job needs an id");
    if (out.id_text.size() + id.size() > UINT32_MAX)  // a piece is at most a few lines of 64 MiB
      throw LoadError(path, ln, "id", "more than 4 GiB of ids in one piece of the file");
    r.tool = vov::tool_view(r.command, wrappers);
    kind_key(r, key);
    out.kind.push_back(kinds.find_or_add(my_kinds, key, r));
    out.line.push_back(static_cast<uint32_t>(ln - piece.first_line));
    out.id_text.append(id);
    out.id_end.push_back(static_cast<uint32_t>(out.id_text.size()));
    out.id_hash.push_back(std::hash<std::string_view>{}(id));
    for (const auto& [column, value, none] :
         {std::tuple{&out.submit, submit, 0.0}, std::tuple{&out.runtime, runtime, nan},
          std::tuple{&out.walltime, walltime, nan}, std::tuple{&out.duration, r.expected_duration, 0.0}}) {
      if (column->empty() && std::memcmp(&value, &none, sizeof(double)) == 0) continue;  // all default so far
      if (column->size() + 1 < out.kind.size()) column->resize(out.kind.size() - 1, none);
      column->push_back(value);
    }
  };
  if (read_stream(piece, parser, take)) return;
  // Line by line (what the stream read is dropped; its kinds stay in the table, numbered only if a job
  // has them).
  out.reset(piece.text.size());
  // Bytes that may be read past the piece: a line with simdjson's padding readable after it is parsed
  // where it is, another is copied first.
  const char* const readable_end = piece.text.data() + piece.text.size() + piece.padding;
  PieceLines in(piece);
  std::string_view line;
  try {
    while (in.next(line)) {
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      const size_t ln = in.line();
      simdjson::dom::element doc;
      const bool padded = line.data() + line.size() + simdjson::SIMDJSON_PADDING <= readable_end;
      if (auto err = parser.parse(line.data(), line.size(), !padded).get(doc))
        throw LoadError(path, ln, "", fmt::format("malformed JSON: {}", simdjson::error_message(err)));
      take(doc, ln);
    }
  } catch (const LoadError& e) {
    out.error = e;
  }
}

// The pieces of jobs.jsonl in file order, each piece's first job's index counting the pieces' jobs.
struct PiecesInOrder {
  std::vector<JobPiece*> pieces;
  std::vector<size_t> start;  // start[q]: piece q's first job; start.back(): the number of jobs
  /// Job j's piece and its index there.
  std::pair<const JobPiece*, size_t> locate(size_t j) const {
    const size_t q = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), j) - start.begin()) - 1;
    return {pieces[q], j - start[q]};
  }
  std::string_view id(size_t j) const {
    const auto [piece, i] = locate(j);
    return piece->id(i);
  }
};

// The first job (in file order) whose id an earlier job has: (its index, the earlier one's); or none.
// JobIds' check, in parallel: the jobs are scattered by the top byte of their id's hash into 256
// buckets (each piece writing its part of every bucket, so a bucket keeps file order), then each bucket
// is scanned in order with a table of its own, small enough for the cache; a bucket's first repeat is
// its earliest, and the earliest over the buckets is the file's.
std::optional<std::pair<size_t, size_t>> first_repeated_id(const PiecesInOrder& in) {
  constexpr size_t kBuckets = 256;
  const size_t np = in.pieces.size();
  std::vector<std::array<size_t, kBuckets>> at(np);  // per piece: where its part of each bucket starts
  tbb::parallel_for(size_t{0}, np, [&](size_t p) {
    at[p].fill(0);
    for (const uint64_t h : in.pieces[p]->id_hash) ++at[p][h >> 56];
  });
  std::vector<size_t> bucket(kBuckets + 1, 0);
  for (size_t b = 0, total = 0; b < kBuckets; ++b) {
    bucket[b] = total;
    for (size_t p = 0; p < np; ++p) {
      const size_t n = at[p][b];
      at[p][b] = total;
      total += n;
    }
    bucket[b + 1] = total;
  }
  std::vector<uint64_t> hash(in.start.back());
  std::vector<uint32_t> job(in.start.back());
  tbb::parallel_for(size_t{0}, np, [&](size_t p) {
    const JobPiece& piece = *in.pieces[p];
    for (size_t i = 0; i < piece.size(); ++i) {
      const uint64_t h = piece.id_hash[i];
      const size_t to = at[p][h >> 56]++;
      hash[to] = h;
      job[to] = static_cast<uint32_t>(in.start[p] + i);
    }
  });
  struct Seen {
    uint32_t job = kNone;
    bool empty() const noexcept { return job == kNone; }
  };
  std::vector<std::optional<std::pair<size_t, size_t>>> found(kBuckets);
  tbb::parallel_for(size_t{0}, kBuckets, [&](size_t b) {
    HashSlots<Seen> seen(bucket[b + 1] - bucket[b]);
    for (size_t e = bucket[b]; e < bucket[b + 1]; ++e) {
      size_t slot = 0;
      if (const Seen* s = seen.find(
              hash[e], [&](const Seen& x) { return in.id(x.job) == in.id(job[e]); }, slot)) {
        found[b] = std::make_pair(size_t{job[e]}, size_t{s->job});
        return;
      }
      seen.insert(slot, hash[e], {job[e]});
    }
  });
  std::optional<std::pair<size_t, size_t>> first;
  for (const auto& f : found)
    if (f && (!first || f->first < first->first)) first = f;
  return first;
}

// The tokens of a tasker's list (an AND of tokens: a tasker offers, it does not choose).
void tasker_tokens(const vov::Expr& e, std::vector<vov::Token>& out, const std::string& path, size_t line) {
  if (e.op == vov::Expr::Op::Token) {
    out.push_back(e.token);
    return;
  }
  if (e.op != vov::Expr::Op::And) throw LoadError(path, line, "-resources", "a tasker's list offers: no | or !");
  for (const vov::Expr& k : e.kids) tasker_tokens(k, out, path, line);
}

void replace_symbols(std::string_view text, const std::string& host, uint32_t cpus, const VovOptions& options,
                     int depth, size_t& replacements, std::string& out) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t at = text.find('@', i);
    if (at == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, at - i));
    const size_t end = text.find('@', at + 1);
    if (end == std::string_view::npos) throw std::invalid_argument(fmt::format("an '@' without its closing '@'"));
    const std::string name(text.substr(at + 1, end - at - 1));
    i = end + 1;
    if (depth >= 8) throw std::invalid_argument(fmt::format("@{}@ nests deeper than 8 symbols", name));
    if (++replacements > 65536)  // symbols that expand to many empty ones would otherwise take forever
      throw std::invalid_argument("more than 65,536 symbols replaced in one list");
    if (const auto d = options.symbols.find(name); d != options.symbols.end()) {
      replace_symbols(d->second, host, cpus, options, depth + 1, replacements, out);
    } else if (name == "HOST") {
      out += host;
    } else if (name == "CPUS") {
      out += fmt::format("CPUS/{}", cpus);
    } else if (name == "STD") {
      std::string std_list = "@HOST@ @CPUS@";
      if (options.symbols.count("OS")) std_list += " @OS@";
      if (options.symbols.count("MACHINE")) std_list += " @MACHINE@";
      replace_symbols(std_list, host, cpus, options, depth + 1, replacements, out);
    } else {
      throw std::invalid_argument(fmt::format(
          "no definition of the tasker symbol @{}@ (define it in the policy's [policy.vov.symbols])", name));
    }
    if (out.size() > 65536) throw std::invalid_argument("the list grows past 65,536 bytes with its symbols");
  }
}

}  // namespace

std::string replace_tasker_symbols(const std::string& resources, const std::string& host, uint32_t cpus,
                                   const VovOptions& options) {
  std::string out;
  size_t replacements = 0;
  replace_symbols(resources, host, cpus, options, 0, replacements, out);
  return out;
}

namespace {

// The farm's side of the dataset, from the taskers' and the maps' definitions alone (no job is needed:
// read beside the jobs): the resource maps, each tasker's offers, which names some tasker offers with a
// quantity, the finite TIMELEFT values. Then, once the jobs' expansions say which counted maps they
// hold (build_columns), the catalog (a numeric column per name some tasker offers with a quantity, a
// counted pool per counted map some job holds, one set-valued column for the other names) and the
// taskers' columns: a farm of 100,000 counted maps whose jobs hold 2,000 has 2,000 pools, not a charge
// of 100,000 consumables per category.
struct VovFarm {
  std::map<std::string, vov::ResourceMap, std::less<>> maps;
  VovTclFile defs;
  std::string taskers_path;
  std::vector<std::vector<vov::Token>> offers;   // per tasker
  std::set<std::string> consumable, quantified;  // names offered as name/N; with any quantity
  std::vector<double> timeleft;                  // the finite TIMELEFT values taskers offer, ascending, once
  Dataset ds;                                    // catalog and taskers (build_columns)
  uint32_t a_names = 0;
};

VovFarm build_farm(VovTclFile farm, const VovSources& src, const VovOptions& options) {
  const std::string& taskers_tcl = src.taskers;
  VovFarm out;
  out.taskers_path = taskers_tcl;
  auto& maps = out.maps;
  for (const VovMapDef& m : farm.maps) {
    vov::ResourceMap rm;
    rm.count = m.count;
    if (m.map) {
      try {
        rm.map = vov::parse_resources(*m.map);
      } catch (const vov::ResourceError& e) {
        throw LoadError(src.maps, m.line, src.map_field(), e.what());
      }
    }
    maps[m.name] = std::move(rm);
  }
  // Taskers' offers.
  std::vector<std::vector<vov::Token>>& offers = out.offers;
  offers.resize(farm.taskers.size());
  // Names some tasker offers with a quantity (name#N, name/N) are numeric columns; the others (offered
  // only as attributes, or by no tasker) are elements of one set-valued column, `resources`.
  std::set<std::string>&consumable = out.consumable, &quantified = out.quantified;
  consumable = {"CPUS", "PERCENT"};
  quantified = {"CPUS", "PERCENT", "TIMELEFT"};
  std::unordered_set<std::string_view> names;  // a tasker named twice is an error of the farm's files
  for (size_t t = 0; t < farm.taskers.size(); ++t) {
    const VovTaskerDef& d = farm.taskers[t];
    if (!names.insert(d.name).second)
      throw LoadError(taskers_tcl, d.line, src.tasker_field(), fmt::format("tasker '{}' is defined twice", d.name));
    try {
      const std::string list = replace_tasker_symbols(d.resources, d.host, d.cpus, options);
      tasker_tokens(vov::parse_resources(list, false), offers[t], taskers_tcl, d.line);
    } catch (const std::invalid_argument& e) {  // ResourceError too
      throw LoadError(taskers_tcl, d.line, src.resources_field(), e.what());
    }
    for (const vov::Token& k : offers[t]) {
      if (k.kind != vov::Token::Kind::Has) quantified.insert(k.name);
      if (k.kind == vov::Token::Kind::Consumes) consumable.insert(k.name);
      if (k.name == "TIMELEFT" && k.kind != vov::Token::Kind::Has && k.amount < kUnbounded)
        out.timeleft.push_back(k.amount);
    }
  }
  std::sort(out.timeleft.begin(), out.timeleft.end());
  out.timeleft.erase(std::unique(out.timeleft.begin(), out.timeleft.end()), out.timeleft.end());
  out.defs = std::move(farm);
  return out;
}

// The catalog and the taskers' columns of `f` (see VovFarm), with a pool for each counted map in `held`.
void build_columns(VovFarm& f, const std::set<std::string, std::less<>>& held) {
  const VovTclFile& farm = f.defs;
  const auto& maps = f.maps;
  const auto& offers = f.offers;
  const auto& consumable = f.consumable;
  Dataset& ds = f.ds;
  VovFarm& out = f;
  for (const std::string& n : f.quantified) {
    AttributeDef d;
    d.name = n;
    d.type = AttrType::Double;
    d.relop = consumable.count(n) ? Relop::LE : Relop::GE;
    d.consumable = consumable.count(n) > 0;
    d.scope = ConsumeScope::PerJob;
    if (n == "CPUS") d.default_amount = 1;  // a job takes one CPU unless it asks for more
    ds.catalog.add(std::move(d));
  }
  for (const auto& [name, m] : maps) {
    if (!m.count || !held.count(name)) continue;
    AttributeDef d = consumable_attribute("map:" + name, AttrType::Int, ConsumeScope::PerJob);
    d.label = name;
    ds.catalog.add(std::move(d));
  }
  std::string set_name = "resources";  // unless a resource has that name
  while (ds.catalog.find(set_name)) set_name += '_';
  AttributeDef set_def;
  set_def.name = set_name;
  set_def.type = AttrType::String;
  set_def.multi_valued = true;
  const uint32_t a_names = out.a_names = ds.catalog.add(std::move(set_def));
  TaskerBuilder tb(ds.catalog);
  for (const auto& [name, m] : maps)
    if (m.count && held.count(name)) tb.set_global(*ds.catalog.find("map:" + name), fmt::format("{}", *m.count));
  const uint32_t a_cpus = *ds.catalog.find("CPUS"), a_percent = *ds.catalog.find("PERCENT"),
                 a_timeleft = *ds.catalog.find("TIMELEFT");
  for (size_t t = 0; t < farm.taskers.size(); ++t) {
    const VovTaskerDef& d = farm.taskers[t];
    tb.add(d.name, d.power);  // (names checked once each by build_farm)
    tb.set_number(a_cpus, d.cpus);
    tb.set_number(a_percent, 100);
    tb.set_number(a_timeleft, kUnbounded);
    std::vector<std::string> attributes;
    for (const vov::Token& k : offers[t]) {
      const auto a = ds.catalog.find(k.name);
      if (!a || *a == a_names) {
        attributes.push_back(k.name);
        continue;
      }
      if (*a == a_cpus || *a == a_percent) continue;  // -CPUS and the 100 percent every tasker has
      tb.set_number(*a, k.kind == vov::Token::Kind::Has ? kUnbounded : k.amount);
    }
    if (!attributes.empty()) tb.set_list(a_names, attributes);
  }
  ds.taskers = std::move(tb).build();
}

// A job's duration matters only through TIMELEFT#<duration rounded up> (seed 000), which keeps the
// taskers offering at least that much: two durations with no tasker's TIMELEFT between them (`timeleft`:
// the finite values offered, ascending; every other tasker offers VOV's MAXINT) keep the same taskers.
// So a kind is split only by that class of its jobs' durations: each (kind, class) met becomes a kind of
// its own (in the kinds' order, then the class's), with the smallest duration of its jobs, rounded up,
// as the one its expansion shows; the jobs are renumbered to them. A farm whose taskers offer no finite
// TIMELEFT has one class (two when a duration passes MAXINT): its kinds stay as they are. O(jobs) then,
// O(jobs log jobs) otherwise.
void by_timeleft(std::vector<KindView>& kinds, const PiecesInOrder& order, const std::vector<double>& timeleft) {
  const auto F = static_cast<uint32_t>(timeleft.size());
  auto class_of = [&](double d) -> uint32_t {
    const double x = std::max(0.0, std::ceil(d));
    if (x > kUnbounded) return F + 1;  // no tasker keeps it
    return static_cast<uint32_t>(std::lower_bound(timeleft.begin(), timeleft.end(), x) - timeleft.begin());
  };
  auto duration = [](const JobPiece& p, size_t i) { return p.duration.empty() ? 0.0 : p.duration[i]; };
  // The smallest duration (rounded up) per new kind: non-negative doubles order as their bits.
  auto lower = [](std::atomic<uint64_t>& slot, double d) {
    const double x = std::max(0.0, std::ceil(d));
    uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    uint64_t seen = slot.load(std::memory_order_relaxed);
    while (bits < seen && !slot.compare_exchange_weak(seen, bits, std::memory_order_relaxed)) {}
  };
  std::atomic<bool> one_class{true};
  if (F == 0)
    tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
      const JobPiece& p = *order.pieces[q];
      for (size_t i = 0; i < p.duration.size(); ++i)
        if (class_of(p.duration[i]) != 0) one_class.store(false, std::memory_order_relaxed);
    });
  if (F == 0 && one_class.load()) {  // every kind keeps its number; its duration is its smallest
    std::vector<std::atomic<uint64_t>> least(kinds.size());
    tbb::parallel_for(size_t{0}, least.size(), [&](size_t k) { least[k].store(UINT64_MAX); });
    tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
      const JobPiece& p = *order.pieces[q];
      for (size_t i = 0; i < p.size(); ++i) lower(least[p.kind[i]], duration(p, i));
    });
    for (size_t k = 0; k < kinds.size(); ++k) {
      const uint64_t bits = least[k].load();
      std::memcpy(&kinds[k].expected_duration, &bits, sizeof bits);
    }
    return;
  }
  // (kind, class) per job, the distinct ones sorted (kinds' order, then class), the jobs renumbered.
  std::vector<uint64_t> pairs(order.start.back());
  tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
    const JobPiece& p = *order.pieces[q];
    for (size_t i = 0; i < p.size(); ++i)
      pairs[order.start[q] + i] = (uint64_t{p.kind[i]} << 32) | class_of(duration(p, i));
  });
  std::vector<uint64_t> distinct = pairs;
  tbb::parallel_sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<std::atomic<uint64_t>> least(distinct.size());
  tbb::parallel_for(size_t{0}, least.size(), [&](size_t k) { least[k].store(UINT64_MAX); });
  tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
    JobPiece& p = *order.pieces[q];
    for (size_t i = 0; i < p.size(); ++i) {
      const uint64_t key = pairs[order.start[q] + i];
      const auto at = static_cast<uint32_t>(std::lower_bound(distinct.begin(), distinct.end(), key) - distinct.begin());
      lower(least[at], duration(p, i));
      p.kind[i] = at;
    }
  });
  std::vector<KindView> split(distinct.size());
  for (size_t x = 0; x < distinct.size(); ++x) {
    split[x] = kinds[distinct[x] >> 32];
    split[x].timeleft_class = static_cast<uint32_t>(distinct[x]);
    const uint64_t bits = least[x].load();
    std::memcpy(&split[x].expected_duration, &bits, sizeof bits);
  }
  kinds = std::move(split);
}

}  // namespace

// `read_farm` gives the taskers' and maps' definitions; it runs beside the reading of jobs.jsonl (the farm
// does not depend on the jobs), on another thread. Its errors come first, as a reader taking the farm's
// files before the jobs would give them.
Dataset build_vov(const std::function<VovTclFile()>& read_farm, const VovSources& src, const std::string& jobs_jsonl,
                  const ProgressFn& progress, const VovOptions& options) {
  std::optional<VovFarm> farm_side;
  std::exception_ptr farm_error;
  tbb::task_group beside;
  beside.run([&] {
    try {
      farm_side.emplace(build_farm(read_farm(), src, options));
    } catch (...) {
      farm_error = std::current_exception();
    }
  });
  // Jobs, read in parallel pieces, each into its own JobPiece, put in file order afterwards (the kinds
  // are shared: one table).
  std::mutex done_mutex;
  std::map<size_t, std::unique_ptr<JobPiece>> done;  // by piece index
  KindTable table;
  const vov::Wrappers wrappers(options.wrappers);
  std::exception_ptr jobs_error;
  try {
    for_each_line_piece(
        jobs_jsonl, progress,
        [&](const LinePiece& piece) {
          auto mine = std::make_unique<JobPiece>();
          read_piece(jobs_jsonl, piece, wrappers, table, *mine);
          const std::lock_guard<std::mutex> lock(done_mutex);
          done.emplace(piece.index, std::move(mine));
        },
        size_t{32} << 20, size_t{4} << 20);
  } catch (...) {
    jobs_error = std::current_exception();
  }
  beside.wait();
  if (farm_error) std::rethrow_exception(farm_error);
  if (jobs_error) std::rethrow_exception(jobs_error);
  const auto& maps = farm_side->maps;  // (not a structured binding: clang 14 cannot capture one)
  // Kinds numbered densely as the file shows them (the numbering does not depend on the threads): each
  // kind's first job found in parallel (an atomic minimum per kind), the kinds sorted by it, the jobs'
  // kinds renumbered in parallel.
  const std::vector<KindView> by_number = table.by_number();
  PiecesInOrder order;
  size_t jobs = 0;
  size_t bad_line = SIZE_MAX;  // the first line a piece could not read
  const LoadError* bad = nullptr;
  for (auto& [index, piece] : done) {
    JobPiece& p = *piece;
    if (p.error && p.error->line < bad_line) {
      bad_line = p.error->line;
      bad = &*p.error;
    }
    order.pieces.push_back(&p);
    order.start.push_back(jobs);
    jobs += p.size();
  }
  order.start.push_back(jobs);
  std::vector<std::atomic<uint64_t>> first_job(by_number.size());
  tbb::parallel_for(size_t{0}, first_job.size(),
                    [&](size_t k) { first_job[k].store(UINT64_MAX, std::memory_order_relaxed); });
  tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
    const JobPiece& p = *order.pieces[q];
    for (size_t i = 0; i < p.size(); ++i) {
      const uint64_t at = order.start[q] + i;
      std::atomic<uint64_t>& first = first_job[p.kind[i]];
      uint64_t seen = first.load(std::memory_order_relaxed);
      while (at < seen && !first.compare_exchange_weak(seen, at, std::memory_order_relaxed)) {}
    }
  });
  std::vector<uint32_t> met;  // the kinds some job has, by their first job
  for (uint32_t k = 0; k < first_job.size(); ++k)
    if (first_job[k].load(std::memory_order_relaxed) != UINT64_MAX) met.push_back(k);
  std::sort(met.begin(), met.end(), [&](uint32_t a, uint32_t b) {
    return first_job[a].load(std::memory_order_relaxed) < first_job[b].load(std::memory_order_relaxed);
  });
  std::vector<uint32_t> dense(by_number.size(), kNone);
  std::vector<KindView> kinds(met.size());  // views into the table, which outlives them
  for (size_t x = 0; x < met.size(); ++x) {
    dense[met[x]] = static_cast<uint32_t>(x);
    kinds[x] = by_number[met[x]];
  }
  tbb::parallel_for(size_t{0}, order.pieces.size(), [&](size_t q) {
    for (uint32_t& k : order.pieces[q]->kind) k = dense[k];
  });
  by_timeleft(kinds, order, farm_side->timeleft);
  // The repeated-id check runs beside the kinds' expansions (which throw nothing: a kind's error is its
  // reason); its errors are thrown before the jobs are built.
  std::optional<std::pair<size_t, size_t>> repeated;
  beside.run([&] { repeated = first_repeated_id(order); });
  // Should anything throw before the tasks beside are waited for, they are waited for before the
  // locals they use go (declared after those, destroyed first).
  struct Join {
    tbb::task_group& tasks;
    ~Join() {
      try {
        tasks.wait();
      } catch (...) {  // the first exception is the one unwinding
      }
    }
  } const join{beside};
  // The expansion depends on a kind's list, its duration's class (by_timeleft: which taskers TIMELEFT
  // keeps; the first kind's duration is the one shown) and those of its appended resources (Priority:,
  // Tool:, User:, Group:) that a map names: one that no map names is dropped after it is counted,
  // whatever its name (vov::expand). Kinds alike in these are expanded once, in parallel
  // (the 1M-job farm's 36,134 kinds are some thousands of expansions), each kind pointing at its
  // expansion (`rep`); a kind's reason (`why`) is its expansion's until compiling adds one of its own.
  std::vector<uint32_t> rep(kinds.size());
  std::vector<uint32_t> reps;  // the first kind of each expansion
  {
    // The maps named by an appended resource, by its type, without the type: whether a kind's is mapped
    // is one lookup of its value (views into the maps' names).
    std::array<std::unordered_set<std::string_view>, 4> mapped;
    static constexpr std::string_view kTypes[] = {"Priority:", "Tool:", "User:", "Group:"};
    for (const auto& [name, m] : maps)
      for (size_t t = 0; t < 4; ++t)
        if (std::string_view(name).starts_with(kTypes[t]))
          mapped[t].insert(std::string_view(name).substr(kTypes[t].size()));
    std::vector<std::string> keys(kinds.size());  // built in parallel, told apart in the kinds' order
    tbb::parallel_for(size_t{0}, kinds.size(), [&](size_t x) {
      const KindView& k = kinds[x];
      std::string& key = keys[x];
      auto text = [&](char tag, std::string_view t) {
        const auto n = static_cast<uint32_t>(t.size());
        key.push_back(tag);
        key.append(reinterpret_cast<const char*>(&n), sizeof n).append(t);
      };
      auto appended = [&](size_t type, std::string_view value) {
        if (mapped[type].empty() || !mapped[type].count(value)) return text('U', "");  // counted only
        const auto n = static_cast<uint32_t>(kTypes[type].size() + value.size());      // mapped: its name matters
        key.push_back('M');
        key.append(reinterpret_cast<const char*>(&n), sizeof n).append(kTypes[type]).append(value);
      };
      text('L', k.resources);
      appended(0, k.priority.empty() ? std::string_view("normal") : k.priority);
      if (!k.tool.empty()) appended(1, k.tool);
      else text('N', "");  // no Tool: appended at all
      appended(2, k.owner);
      appended(3, k.group);
      key.append(reinterpret_cast<const char*>(&k.timeleft_class), sizeof k.timeleft_class);
    });
    std::unordered_map<std::string_view, uint32_t> seen;
    seen.reserve(kinds.size());
    for (size_t x = 0; x < kinds.size(); ++x) {
      const auto [it, fresh] = seen.try_emplace(keys[x], static_cast<uint32_t>(reps.size()));
      if (fresh) reps.push_back(static_cast<uint32_t>(x));
      rep[x] = it->second;
    }
  }
  std::vector<vov::Expansion> exp(reps.size());
  std::vector<std::string> rep_why(reps.size());
  // A walk that meets a cycle after counted maps: what its jobs do depends on those maps when each is
  // dispatched (seed 000's order of stops, vov::expand_gated); with none before it, it is rejected here.
  std::vector<std::unique_ptr<vov::GatedExpansion>> gated(reps.size());
  std::vector<size_t> size(reps.size(), 0);  // resources in a distinct list's expansion(s)
  auto expand_rep = [&](size_t r) {
    try {
      const KindView& k = kinds[reps[r]];  // only the kinds expanded get a JobResources
      const vov::JobResources job{std::string(k.resources), std::string(k.command),  std::string(k.owner),
                                  std::string(k.group),     std::string(k.priority), k.expected_duration};
      exp[r] = vov::expand(
          job, maps, [](std::string_view, double) { return true; }, options.dollars, wrappers, true);
      size[r] = vov::size(exp[r].expanded);
      if (exp[r].outcome == vov::Expansion::Outcome::Cycle) {
        auto g = std::make_unique<vov::GatedExpansion>(
            vov::expand_gated(job, maps, options.dollars, wrappers, JobBuilder::kMaxGate));
        for (const vov::Expansion& e : g->by_mask) size[r] += vov::size(e.expanded);
        if (!g->gate.empty()) gated[r] = std::move(g);
        else rep_why[r] = "a cycle in the resource maps: " + exp[r].detail;
      }
    } catch (const vov::ResourceError& e) {
      const std::string what = e.what();
      rep_why[r] = what.starts_with("no definition of the resource $")
                       ? what + " (define it in the policy's [policy.vov.dollars], --policy)"
                       : fmt::format("column {}: {}", e.position, what);
    }
  };
  // What the distinct lists expand to is held together until compiled: at most
  // options.max_expanded_resources resources in all. In parallel while the total stays under it (nearly every farm);
  // once it passes, the lists are expanded again one by one in their order, each kept only while the total has room,
  // the others rejected saying so (the same ones whatever the threads).
  std::atomic<size_t> total{0};
  std::atomic<bool> over{false};
  tbb::parallel_for(size_t{0}, reps.size(), [&](size_t r) {
    if (over.load(std::memory_order_relaxed)) return;
    expand_rep(r);
    if (total.fetch_add(size[r], std::memory_order_relaxed) + size[r] > options.max_expanded_resources) over = true;
  });
  if (over) {
    size_t kept = 0;
    for (size_t r = 0; r < reps.size(); ++r) {
      exp[r] = {};
      gated[r].reset();
      rep_why[r].clear();
      size[r] = 0;
    }
    for (size_t r = 0; r < reps.size(); ++r) {
      expand_rep(r);
      if (kept + size[r] <= options.max_expanded_resources) {
        kept += size[r];
        continue;
      }
      exp[r] = {};
      gated[r].reset();
      rep_why[r] = fmt::format(
          "its list expands to {} resources through the maps, more than the {} colmatch keeps for the farm's "
          "distinct lists together ({} kept)",
          size[r], options.max_expanded_resources, kept);
    }
  }
  std::vector<std::string> why(kinds.size());
  for (size_t x = 0; x < kinds.size(); ++x) why[x] = rep_why[rep[x]];
  // The counted maps some expansion holds get a pool each (every alternative's: the walk with every map
  // available holds them all; a gated walk's, each combination's).
  std::set<std::string, std::less<>> pooled;
  for (size_t r = 0; r < reps.size(); ++r) {
    if (!rep_why[r].empty()) continue;
    for (const vov::Held& h : exp[r].held) pooled.insert(h.map);
    if (gated[r]) {
      for (const vov::Held& h : gated[r]->gate) pooled.insert(h.map);
      for (const vov::Expansion& e : gated[r]->by_mask)
        for (const vov::Held& h : e.held) pooled.insert(h.map);
    }
  }
  build_columns(*farm_side, pooled);
  Dataset& ds = farm_side->ds;
  const uint32_t a_names = farm_side->a_names;
  ds.name = "vov";
  // One prototype job per kind: its compiled request and charges (a kind whose list cannot be
  // matched keeps its reason instead); every job is then a copy of its kind's but for id and times.
  // Expansions alike (the list as text, which parses back to the same list, and the counted maps held)
  // compile alike: one compiled request and one charge list per distinct expansion, interned in the
  // kinds' order.
  std::vector<std::string> expansion(reps.size());
  tbb::parallel_for(size_t{0}, reps.size(), [&](size_t r) {
    if (!rep_why[r].empty() || gated[r]) return;
    expansion[r] = vov::to_text(exp[r].expanded);
    for (const vov::Held& h : exp[r].held) {
      const auto n = static_cast<uint32_t>(h.map.size());
      expansion[r].push_back('\0');
      expansion[r].append(reinterpret_cast<const char*>(&n), sizeof n).append(h.map);
      expansion[r].append(reinterpret_cast<const char*>(&h.units), sizeof h.units);
    }
  });
  std::vector<uint32_t> distinct_of(reps.size(), kNone), distinct;  // an expansion's text; each one's first
  {
    std::unordered_map<std::string, uint32_t> seen;
    for (size_t r = 0; r < reps.size(); ++r) {  // reps in the kinds' order: interned as the kinds show them
      if (!rep_why[r].empty() || gated[r]) continue;
      const auto [it, fresh] = seen.try_emplace(std::move(expansion[r]), static_cast<uint32_t>(distinct.size()));
      if (fresh) distinct.push_back(static_cast<uint32_t>(r));
      distinct_of[r] = it->second;
    }
  }
  // An expansion whose ORs hold counted maps has several scheduling solutions (seed 000), one taken at
  // dispatch (JobTable::Choice): its jobs ask for what the solutions ask together and charge what they
  // all charge; each solution is compiled with what it alone charges. Any other has one solution.
  using Charges = std::vector<std::pair<uint32_t, double>>;
  std::vector<Request> compiled(distinct.size());
  std::vector<Charges> charges(distinct.size());
  std::vector<std::vector<Request>> solution_requests(distinct.size());
  std::vector<std::vector<Charges>> solution_charges(distinct.size());
  std::vector<uint8_t> solutions_cut(distinct.size(), 0);
  tbb::parallel_for(size_t{0}, distinct.size(), [&](size_t d) {
    const size_t r = distinct[d];
    auto held_charges = [&](const std::vector<vov::Held>& held, Charges& into) {
      for (const vov::Held& h : held) into.emplace_back(*ds.catalog.find("map:" + h.map), h.units);
    };
    if (!vov::chooses(exp[r].expanded)) {  // one solution, the list itself (most kinds: no copy)
      compiled[d] = compile_expansion(exp[r].expanded, ds.catalog, a_names, true, charges[d]);
      held_charges(exp[r].held, charges[d]);
      return;
    }
    bool cut = false;
    std::vector<vov::Solution> sols = vov::solutions(exp[r].expanded, vov::kMaxSolutions, cut);
    solutions_cut[d] = cut;
    compiled[d] = compile_expansion(vov::without_held(exp[r].expanded), ds.catalog, a_names, true, charges[d]);
    std::vector<vov::Held> common;  // the counted maps held outside every OR: held by every solution
    for (const vov::Expr& k : exp[r].expanded.kids)
      if (k.op == vov::Expr::Op::Token && k.token.kind == vov::Token::Kind::Held)
        common.push_back({k.token.name, k.token.amount});
    held_charges(common, charges[d]);
    for (vov::Solution& s : sols) {
      solution_charges[d].emplace_back();
      solution_requests[d].push_back(compile_expansion(s.list, ds.catalog, a_names, true, solution_charges[d].back()));
      held_charges(s.held, solution_charges[d].back());
    }
  });
  JobBuilder protos(ds.catalog);
  const std::vector<uint32_t> interned = protos.intern_all(std::move(compiled));
  std::vector<uint32_t> choice_of(distinct.size(), kNone);
  for (size_t d = 0; d < distinct.size(); ++d) {
    if (solution_requests[d].empty()) continue;
    const std::vector<uint32_t> sr = protos.intern_all(std::move(solution_requests[d]));
    choice_of[d] = protos.add_choice(sr, solution_charges[d]);
  }
  std::vector<uint32_t> gated_choice(reps.size(), kNone);
  std::vector<uint8_t> gated_cut(reps.size(), 0);
  for (size_t r = 0; r < reps.size(); ++r)
    if (gated[r]) gated_choice[r] = gated_choice_of(*gated[r], ds.catalog, a_names, protos, gated_cut[r]);
  for (size_t x = 0; x < kinds.size(); ++x) {
    if (x + 8 < kinds.size()) {  // kinds lie scattered over the table's shards: fetch ahead what is read
      __builtin_prefetch(kinds[x + 8].owner.data());
      __builtin_prefetch(&exp[rep[x + 8]]);
    }
    const uint32_t p = protos.add("", kinds[x].owner, kinds[x].group, 0, 0);
    if (!why[x].empty()) continue;
    const uint32_t r = rep[x];
    if (gated[r]) {  // what it does is decided when it is dispatched: an empty request, the gate's choice
      if (exp[r].curtailed) protos.set_note(p, "depth limit");  // (its walk with every map available)
      if (gated_cut[r]) protos.set_note(p, "solutions limit");
      protos.set_choice(gated_choice[r]);
      continue;
    }
    if (exp[r].curtailed) protos.set_note(p, "depth limit");  // VOV curtails silently; colmatch says so
    if (solutions_cut[distinct_of[r]]) protos.set_note(p, "solutions limit");
    try {
      protos.set_request_index(interned[distinct_of[r]]);
      for (const auto& [a, n] : charges[distinct_of[r]]) protos.set_amount(a, n);
      if (choice_of[distinct_of[r]] != kNone) protos.set_choice(choice_of[distinct_of[r]]);
    } catch (const ValueError& e) {
      why[x] = e.what();
    }
  }
  const JobTable prototypes = std::move(protos).build();
  beside.wait();
  // Errors as a reader going line by line would meet them: a repeated id before the first bad line wins.
  if (repeated) {
    const auto [later, i] = order.locate(repeated->first);
    const auto [earlier, e] = order.locate(repeated->second);
    if (later->line_of(i) < bad_line)
      throw JobIds::duplicate_id(jobs_jsonl, later->line_of(i), "id", std::string(later->id(i)), earlier->line_of(e));
  }
  if (bad != nullptr) throw *bad;
  std::vector<std::pair<uint32_t, std::string>> rejected;  // (job, reason): jobs of a kind with a reason
  std::vector<JobBuilder::CopiedJobs> copied;
  std::vector<uint8_t> has_why(kinds.size());  // (a byte a kind: looked up once per job)
  for (size_t x = 0; x < kinds.size(); ++x) has_why[x] = !why[x].empty();
  const bool any_why = std::find(has_why.begin(), has_why.end(), 1) != has_why.end();
  for (size_t q = 0; q < order.pieces.size(); ++q) {
    const JobPiece& p = *order.pieces[q];
    for (size_t i = 0; any_why && i < p.size(); ++i)
      if (has_why[p.kind[i]])
        rejected.emplace_back(
            static_cast<uint32_t>(order.start[q] + i),
            fmt::format("{}:{}: job {}: field 'resources': {}", jobs_jsonl, p.line_of(i), p.id(i), why[p.kind[i]]));
    copied.push_back({p.kind, p.id_text, p.id_end, p.submit, p.runtime, p.walltime});
  }
  JobBuilder jb(ds.catalog);
  try {
    jb.add_copies(prototypes, copied);
  } catch (const ValueError& e) {  // a negative or infinite time: the reader took numbers >= 0 only
    throw LoadError(jobs_jsonl, 0, "", e.what());
  }
  for (auto& [j, reason] : rejected) jb.reject(j, std::move(reason));
  ds.jobs = std::move(jb).build();
  ds.policy = ds.policy_defaults = accelerator_policy_defaults();
  return std::move(ds);
}

Dataset load_vov(const std::string& taskers_tcl, const std::string& resources_tcl, const std::string& jobs_jsonl,
                 const ProgressFn& progress, const VovOptions& options) {
  const auto read_farm = [&] {
    VovTclFile farm = read_vov_tcl(taskers_tcl);
    if (!resources_tcl.empty()) {
      VovTclFile res = read_vov_tcl(resources_tcl);
      for (auto& t : res.taskers) farm.taskers.push_back(std::move(t));
      for (auto& m : res.maps) farm.maps.push_back(std::move(m));
    }
    return farm;
  };
  return build_vov(read_farm, {taskers_tcl, resources_tcl.empty() ? taskers_tcl : resources_tcl}, jobs_jsonl, progress,
                   options);
}

}  // namespace colmatch::loaders
