// The parallel reader of an Altair Accelerator jobs.jsonl: loaders/vov_jobs.hpp.
#include "loaders/vov_jobs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include <fmt/format.h>
#include <simdjson.h>

namespace colmatch::loaders::vov_jobs {
namespace {

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

// Whether a JSON key is the literal (its length known when compiled: no memcmp call per key).
template <size_t N>
bool is(std::string_view name, const char (&literal)[N]) noexcept {
  return name.size() == N - 1 && std::memcmp(name.data(), literal, N - 1) == 0;
}

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

}  // namespace

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

}  // namespace colmatch::loaders::vov_jobs
