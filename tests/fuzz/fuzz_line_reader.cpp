// libFuzzer target for the text readers every loader stands on (loaders/line_reader.hpp over
// loaders/byte_stream.hpp): the input as a file, plain, gzip (members one after another, trailing bytes)
// or zstd by its first bytes, read line by line (LineReader) and in pieces (for_each_line_piece, small
// blocks and pieces so that lines cross them). Both must give the same lines with the same numbers, or
// both refuse the file; a difference is a finding, as is a crash or a stall.
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace colmatch;

namespace {

using Lines = std::vector<std::pair<size_t, std::string>>;

// The lines of `path`, or nothing when the reader refuses it.
std::pair<bool, Lines> by_line(const std::string& path) {
  Lines out;
  try {
    loaders::LineReader r(path);
    std::string_view line;
    while (r.next(line)) out.emplace_back(r.line(), std::string(line));
  } catch (const loaders::LoadError&) {
    return {false, {}};
  }
  return {true, out};
}

std::pair<bool, Lines> by_piece(const std::string& path) {
  std::mutex mu;
  std::vector<std::pair<size_t, Lines>> pieces;
  try {
    loaders::for_each_line_piece(
        path, {},
        [&](const loaders::LinePiece& p) {
          Lines mine;
          loaders::PieceLines in(p);
          std::string_view line;
          while (in.next(line)) mine.emplace_back(in.line(), std::string(line));
          std::lock_guard<std::mutex> lock(mu);
          pieces.emplace_back(p.index, std::move(mine));
        },
        /*block_bytes=*/64, /*piece_bytes=*/7);
  } catch (const loaders::LoadError&) {
    return {false, {}};
  }
  std::sort(pieces.begin(), pieces.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Lines out;
  for (auto& [index, lines] : pieces)
    for (auto& l : lines) out.push_back(std::move(l));
  return {true, out};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::temp_file("lines", std::string_view(reinterpret_cast<const char*>(data), size));
  const auto a = by_line(path);
  const auto b = by_piece(path);
  if (a != b) std::abort();  // the two readers disagree on the lines or on whether the file reads
  return 0;
}
