// jsonl_rate FARM_TOML JOBS_JSONL [ROUNDS]: how fast colmatch reads a native jobs.jsonl against simdjson's
// own rate on the same file, in one run (issue 29; BENCHMARKS.md). Each round times, on a file in the
// page cache:
//   simdjson-1   simdjson::dom::parser::parse_many over the whole file, one thread (its documents counted)
//   simdjson-N   the same over pieces of 4 MiB cut at line ends, on every thread (oneTBB): parsing alone
//   colmatch     loaders::read_jobs_jsonl: the job table, in parallel pieces
//   sequential   loaders::read_jobs_jsonl_sequential: the same table, one line at a time
// and prints seconds and GB/s per round, then the minimum of each.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>
#include <tbb/parallel_for.h>

#include "loaders/native.hpp"

using namespace colmatch;

namespace {

double seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

size_t count_docs(simdjson::dom::parser& parser, std::string_view text) {
  simdjson::dom::document_stream docs;
  if (parser.parse_many(reinterpret_cast<const uint8_t*>(text.data()), text.size(), size_t{1} << 20).get(docs)) {
    std::fprintf(stderr, "parse_many failed\n");
    std::exit(1);
  }
  size_t n = 0;
  for (auto doc : docs) n += doc.error() == simdjson::SUCCESS;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: jsonl_rate FARM_TOML JOBS_JSONL [ROUNDS]\n");
    return 1;
  }
  const std::string jobs = argv[2];
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  const Catalog catalog = loaders::read_farm_toml(argv[1]).catalog;
  const int fd = ::open(jobs.c_str(), O_RDONLY);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    std::perror(jobs.c_str());
    return 1;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  // simdjson wants SIMDJSON_PADDING readable bytes after the text: a copy with them (not timed)
  simdjson::padded_string text(size);
  for (size_t at = 0; at < size;) {  // a read returns at most about 2 GiB
    const ssize_t n = ::pread(fd, text.data() + at, size - at, static_cast<off_t>(at));
    if (n <= 0) {
      std::perror(jobs.c_str());
      return 1;
    }
    at += static_cast<size_t>(n);
  }
  ::close(fd);
  const std::string_view all(text.data(), size);
  std::vector<std::string_view> pieces;  // 4 MiB, cut after a newline
  for (size_t at = 0; at < size;) {
    size_t end = std::min(size, at + (size_t{4} << 20));
    if (end < size) end = all.find('\n', end) == std::string_view::npos ? size : all.find('\n', end) + 1;
    pieces.push_back(all.substr(at, end - at));
    at = end;
  }
  std::map<std::string, double> best;
  const double gb = static_cast<double>(size) / 1e9;
  for (int r = 0; r < rounds; ++r) {
    size_t docs = 0;
    simdjson::dom::parser one;
    std::map<std::string, double> t;
    t["simdjson-1"] = seconds([&] { docs = count_docs(one, all); });
    std::atomic<size_t> docs_n{0};
    t["simdjson-N"] = seconds([&] {
      tbb::parallel_for(size_t{0}, pieces.size(), [&](size_t p) {
        static thread_local simdjson::dom::parser parser;
        docs_n += count_docs(parser, pieces[p]);
      });
    });
    size_t table = 0;
    t["colmatch"] = seconds([&] { table = loaders::read_jobs_jsonl(jobs, catalog).size(); });
    t["sequential"] = seconds([&] { table = loaders::read_jobs_jsonl_sequential(jobs, catalog).size(); });
    for (const auto& [name, s] : t) {
      std::printf("round %d %-10s %8.3f s %6.2f GB/s\n", r, name.c_str(), s, gb / s);
      best[name] = r == 0 ? s : std::min(best[name], s);
    }
    if (docs != table || docs_n != table) std::printf("documents %zu / %zu, jobs %zu\n", docs, docs_n.load(), table);
  }
  std::printf("%.2f GB, %zu pieces; minimum of %d rounds:\n", gb, pieces.size(), rounds);
  for (const auto& [name, s] : best) std::printf("  %-10s %8.3f s %6.2f GB/s\n", name.c_str(), s, gb / s);
  std::printf("  colmatch / simdjson-1 %.2f, colmatch / simdjson-N %.2f\n", best["colmatch"] / best["simdjson-1"],
              best["colmatch"] / best["simdjson-N"]);
  return 0;
}
