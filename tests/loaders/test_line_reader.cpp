// LineReader and split_csv (loaders/line_reader.hpp): plain and gzip input alike, line numbers, CRLF,
// lines longer than the read buffer, and errors that name the file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <csignal>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"

using namespace colmatch::loaders;
namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("colmatch-lr-" + std::to_string(::getpid()) + "-" + name)).string();
}

std::string write_plain(const std::string& name, const std::string& content) {
  const std::string p = temp_path(name);
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

std::string write_gz(const std::string& name, const std::string& content) {
  const std::string p = temp_path(name);
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, content.data(), static_cast<unsigned>(content.size()));
  gzclose(f);
  return p;
}

// A zstd file of `content`, in `frames` frames (zstd -d reads concatenated frames as one stream), each
// with its checksum as the zstd command writes it.
std::string write_zst(const std::string& name, const std::string& content, int frames = 1) {
  const std::string p = temp_path(name);
  std::ofstream out(p, std::ios::binary);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  const size_t per = content.size() / static_cast<size_t>(frames) + 1;
  for (size_t at = 0; at == 0 || at < content.size(); at += per) {
    const std::string part = content.substr(at, per);
    std::string buf(ZSTD_compressBound(part.size()), '\0');
    const size_t n = ZSTD_compress2(cctx, buf.data(), buf.size(), part.data(), part.size());
    out.write(buf.data(), static_cast<std::streamsize>(n));
  }
  ZSTD_freeCCtx(cctx);
  return p;
}

std::vector<std::pair<size_t, std::string>> read_all(const std::string& path) {
  LineReader r(path);
  std::vector<std::pair<size_t, std::string>> out;
  std::string_view line;
  while (r.next(line)) out.emplace_back(r.line(), std::string(line));
  return out;
}

const std::string kText = "a,b\r\n\nthird\nlast-without-newline\r";

TEST(LineReader, PlainAndGzipGiveTheSameLinesAndNumbers) {
  const std::vector<std::pair<size_t, std::string>> want = {
      {1, "a,b"}, {2, ""}, {3, "third"}, {4, "last-without-newline"}};
  EXPECT_EQ(read_all(write_plain("plain.txt", kText)), want);
  EXPECT_EQ(read_all(write_gz("text.gz", kText)), want) << "gzip is recognised by its magic, not its name";
  EXPECT_EQ(read_all(write_zst("text.z", kText)), want) << "zstd too";
  EXPECT_EQ(read_all(write_zst("frames.zst", kText, 3)), want) << "a file of several zstd frames is one stream";
  EXPECT_TRUE(read_all(write_plain("empty.txt", "")).empty());
  // pzstd's files begin with a skippable frame (issue 45: read as plain text): magic 0x184D2A50, length 4
  const std::string zst = write_zst("skip.zst", kText);
  std::ifstream in(zst, std::ios::binary);
  const std::string frames((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string pz = temp_path("pzstd.zst");
  std::ofstream(pz, std::ios::binary) << std::string("\x50\x2a\x4d\x18\x04\x00\x00\x00\x2a\x00\x00\x00", 12) << frames;
  EXPECT_EQ(read_all(pz), want) << "a skippable frame first";
}

// Issue 12: a UTF-8 byte-order mark opening a file is skipped in every line format (it was accepted only
// in TOML); the same bytes later in a file are data.
TEST(LineReader, AByteOrderMarkOpeningTheFileIsSkipped) {
  const std::string bom = "\xEF\xBB\xBF";
  const std::vector<std::pair<size_t, std::string>> want = {{1, "a"}, {2, bom + "b"}};
  EXPECT_EQ(read_all(write_plain("bom.txt", bom + "a\n" + bom + "b\n")), want);
  EXPECT_EQ(read_all(write_gz("bom.gz", bom + "a\n" + bom + "b")), want);
  EXPECT_EQ(read_all(write_plain("bomonly.txt", bom)), (std::vector<std::pair<size_t, std::string>>{{1, ""}}));
}

// Issue 12: a line past kMaxLineBytes (64 MiB) is a load error naming file and line, not a run's memory.
TEST(LineReader, ALineLongerThanTheBoundIsAnError) {
  const std::string path = write_gz("huge.gz", "ok\n" + std::string(kMaxLineBytes + 1, 'x') + "\n");
  LineReader r(path);
  std::string_view line;
  ASSERT_TRUE(r.next(line));
  try {
    r.next(line);
    FAIL() << "read a line past the bound";
  } catch (const LoadError& e) {
    EXPECT_EQ(e.file, path);
    EXPECT_EQ(e.line, 2u);
    EXPECT_NE(std::string(e.what()).find("a line longer than 67108864 bytes"), std::string::npos) << e.what();
  }
  const std::string at = write_gz("atbound.gz", std::string(kMaxLineBytes, 'y'));
  EXPECT_EQ(read_all(at).at(0).second.size(), kMaxLineBytes) << "the bound itself is read";
}

TEST(LineReader, LinesLongerThanTheBufferComeThroughWhole) {
  const std::string big(3 * 1024 * 1024 + 7, 'x');
  const auto lines = read_all(write_gz("big.gz", "short\n" + big + "\nend\n"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].second.size(), big.size());
  EXPECT_EQ(lines[2], (std::pair<size_t, std::string>{3, "end"}));
}

TEST(LineReader, ErrorsNameTheFile) {
  const std::string missing = temp_path("does-not-exist");
  try {
    LineReader r(missing);
    FAIL();
  } catch (const LoadError& e) {
    EXPECT_EQ(e.file, missing);
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
  // a gzip stream cut in half
  std::string body;
  for (int i = 0; i < 20000; ++i) body += "line " + std::to_string(i * 7919) + "\n";
  const std::string whole = write_gz("whole.gz", body);
  std::ifstream in(whole, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = write_plain("cut.gz", bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW(read_all(cut), LoadError);
  // a zstd stream cut in half, or with a byte changed
  const std::string zst = write_zst("whole.zst", body);
  std::ifstream zin(zst, std::ios::binary);
  std::string zbytes((std::istreambuf_iterator<char>(zin)), std::istreambuf_iterator<char>());
  const std::string zcut = write_plain("cut.zst", zbytes.substr(0, zbytes.size() / 2));
  try {
    read_all(zcut);
    FAIL() << "a truncated zstd file read through";
  } catch (const LoadError& e) {
    EXPECT_EQ(e.file, zcut);
    EXPECT_NE(std::string(e.what()).find("corrupt or truncated zstd data"), std::string::npos) << e.what();
  }
  std::string bad = zbytes;
  bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x5a);
  EXPECT_THROW(read_all(write_plain("bad.zst", bad)), LoadError);
}

TEST(LineReader, ProgressReportsBytesRead) {
  uint64_t last = 0;
  LineReader r(write_plain("progress.txt", "abc\ndef\n"),
               [&](const std::string&, uint64_t, uint64_t bytes) { last = bytes; });
  std::string_view line;
  while (r.next(line)) {}
  EXPECT_EQ(last, 8u);
}

// for_each_line_piece + PieceLines (the parallel reader of the 1M-job Accelerator jobs): the same lines
// and line numbers as LineReader, whatever the block and piece sizes (down to a byte, so that lines
// cross every boundary, blocks grow for a line longer than they are and pieces hold one line each).
// Every piece's padding is read (the sanitizer build catches a byte past the block or the mapping); the
// pieces of one block or mapped file all end their padding at one place.
volatile char padding_sink = 0;

std::vector<std::pair<size_t, std::string>> read_pieces(const std::string& path, size_t block, size_t piece,
                                                        size_t* pieces_seen = nullptr) {
  std::mutex mu;
  std::map<size_t, std::vector<std::pair<size_t, std::string>>> by_piece;
  std::map<size_t, const char*> readable_end;  // by piece
  for_each_line_piece(
      path, {},
      [&](const LinePiece& p) {
        std::vector<std::pair<size_t, std::string>> mine;
        PieceLines in(p);
        std::string_view line;
        while (in.next(line)) mine.emplace_back(in.line(), std::string(line));
        const char* const end = p.text.data() + p.text.size();
        for (size_t b = 0; b < p.padding; ++b) padding_sink = end[b];  // readable, not relied on
        std::lock_guard<std::mutex> lock(mu);
        readable_end[p.index] = end + p.padding;
        EXPECT_TRUE(by_piece.emplace(p.index, std::move(mine)).second) << "piece " << p.index << " handed out twice";
      },
      block, piece);
  if (!readable_end.empty()) {  // a mapped file: one mapping; a gzip file: its last piece ends a block
    const auto last = readable_end.rbegin()->second;
    if (path.ends_with(".txt")) {  // write_plain's files: mapped whole
      for (const auto& [index, end] : readable_end) EXPECT_EQ(end, last) << "piece " << index << " of " << path;
    }
  }
  std::vector<std::pair<size_t, std::string>> out;
  size_t expect = 0;
  for (auto& [index, lines] : by_piece) {
    EXPECT_EQ(index, expect++) << "pieces are numbered from 0 without gaps";
    for (auto& l : lines) out.push_back(std::move(l));
  }
  if (pieces_seen) *pieces_seen = by_piece.size();
  return out;
}

// The bytes of a file written by one of the write_* helpers.
std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A FIFO at a new path, written `bytes` by a thread of its own (opening it waits for the reader).
struct Fifo {
  std::string path;
  std::thread writer;
  Fifo(const std::string& name, std::string bytes) : path(temp_path(name)) {
    fs::remove(path);
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    std::signal(SIGPIPE, SIG_IGN);  // a reader that stops early makes a write fail, not end the test
    writer = std::thread([p = path, b = std::move(bytes)] {
      // opens once the reader has (ENXIO before), for a minute at most: a reader that never opens fails
      // its test instead of stalling it
      int fd = -1;
      for (int tries = 0; fd < 0 && tries < 6000; ++tries)
        if ((fd = ::open(p.c_str(), O_WRONLY | O_NONBLOCK)) < 0) ::usleep(10000);
      if (fd < 0) return;
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      for (size_t at = 0; at < b.size();) {
        const ssize_t n = ::write(fd, b.data() + at, b.size() - at);
        if (n <= 0) break;
        at += static_cast<size_t>(n);
      }
      ::close(fd);
    });
  }
  ~Fifo() {
    writer.join();
    fs::remove(path);
  }
};

// `--log <(zcat log.gz)` and FIFOs: the magic number was read by a first opening of the file, which took
// the pipe's first block with it ("expected 18 fields, found 4").
TEST(LineReader, APipeReadsAsTheFileItCarries) {
  std::string body;
  for (int i = 0; i < 30000; ++i) body += "line " + std::to_string(i * 7919) + "\n";
  const auto want = read_all(write_plain("pipe-body.txt", body));
  const std::map<std::string, std::string> files = {{"plain", body},
                                                    {"gzip", bytes_of(write_gz("pipe.gz", body))},
                                                    {"zstd", bytes_of(write_zst("pipe.zst", body, 2))}};
  for (const auto& [kind, bytes] : files) {
    {
      Fifo fifo("lines." + kind, bytes);
      EXPECT_EQ(read_all(fifo.path), want) << kind << ", line by line";
    }
    {
      Fifo fifo("pieces." + kind, bytes);
      EXPECT_EQ(read_pieces(fifo.path, 4096, 1000), want) << kind << ", in pieces";
    }
  }
}

// gzip -c a b > ab.gz (and pigz) write members one after another: one stream, as gunzip reads it; bytes
// after the last member that are no member are ignored, as gunzip and zlib's gzread ignore them.
TEST(LineReader, GzipMembersOneAfterAnotherAreOneStream) {
  const std::string two = bytes_of(write_gz("first.gz", "a\nb\n")) + bytes_of(write_gz("second.gz", "c\nd"));
  const std::vector<std::pair<size_t, std::string>> want = {{1, "a"}, {2, "b"}, {3, "c"}, {4, "d"}};
  EXPECT_EQ(read_all(write_plain("members.gz", two)), want);
  EXPECT_EQ(read_pieces(write_plain("members-pieces.gz", two), 3, 1), want);
  EXPECT_EQ(read_all(write_plain("trailing.gz", two + std::string(1000, '\0'))), want);
}

TEST(LinePieces, SameLinesAndNumbersAsLineReaderForEveryBlockAndPieceSize) {
  std::mt19937 rng(7);
  const std::string bom = "\xEF\xBB\xBF";
  for (int round = 0; round < 40; ++round) {
    std::string text = round % 3 == 0 ? bom : "";
    const int lines = static_cast<int>(rng() % 60);
    for (int i = 0; i < lines; ++i) {
      const size_t len = rng() % 5 == 0 ? rng() % 300 : rng() % 12;
      for (size_t c = 0; c < len; ++c) text += static_cast<char>('a' + rng() % 26);
      if (rng() % 4 == 0) text += '\r';
      if (i + 1 < lines || rng() % 2 == 0) text += '\n';
    }
    const std::string plain = write_plain("pieces.txt", text), gz = write_gz("pieces.gz", text),
                      zst = write_zst("pieces.zst", text, 1 + round % 3);
    const auto want = read_all(plain);
    for (const size_t block : {size_t{1}, size_t{3}, size_t{64}, size_t{4096}})
      for (const size_t piece : {size_t{1}, size_t{7}, size_t{1} << 20}) {
        EXPECT_EQ(read_pieces(plain, block, piece), want)
            << "round " << round << " block " << block << " piece " << piece;
        EXPECT_EQ(read_pieces(gz, block, piece), want) << "round " << round << " (gzip)";
        EXPECT_EQ(read_pieces(zst, block, piece), want) << "round " << round << " (zstd)";
      }
  }
  size_t pieces = 0;
  EXPECT_EQ(read_pieces(write_plain("many.txt", "a\nb\nc\nd\n"), 4, 1, &pieces).size(), 4u);
  EXPECT_EQ(pieces, 4u) << "one line per piece when pieces are a byte";
  EXPECT_TRUE(read_pieces(write_plain("none.txt", ""), 8, 8).empty());
}

// A zstd file read in pieces (issue 29: decompressed on the reading thread as gzip is): the same lines
// across frames and blocks; cut short, an error naming the file.
TEST(LinePieces, ZstdFilesReadInBlocksAndStopWhenCut) {
  std::string body;
  for (int i = 0; i < 50000; ++i) body += "line " + std::to_string(i * 7919) + "\n";
  const auto want = read_all(write_plain("zbody.txt", body));
  EXPECT_EQ(read_pieces(write_zst("zbody.zst", body, 5), 4096, 1000), want);
  const std::string zst = write_zst("zcut-src.zst", body);
  std::ifstream in(zst, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = write_plain("zcut.zst", bytes.substr(0, bytes.size() * 2 / 3));
  try {
    read_pieces(cut, 4096, 1000);
    FAIL() << "a truncated zstd file read through";
  } catch (const LoadError& e) {
    EXPECT_EQ(e.file, cut);
    EXPECT_NE(std::string(e.what()).find("corrupt or truncated zstd data"), std::string::npos) << e.what();
  }
}

// Past kMaxLineBytes: a gzip file (read in blocks that grow for the line) and a plain file (mapped whole,
// each piece checking its lines) alike, at the end of the file or not, with its final newline or not.
TEST(LinePieces, ALineLongerThanTheBoundIsAnErrorNamingItsLine) {
  const std::string big(kMaxLineBytes + 1, 'x');
  for (const bool gz : {true, false})
    for (const bool final_newline : {true, false})
      for (const bool at_end : {true, false}) {
        const std::string text =
            "ok\nfine\n" + big + (final_newline || !at_end ? "\n" : "") + (at_end ? "" : "after\n");
        const std::string path = gz ? write_gz("huge-pieces.gz", text) : write_plain("huge-pieces.txt", text);
        try {
          read_pieces(path, size_t{1} << 20, size_t{1} << 20);
          FAIL() << "read a line past the bound";
        } catch (const LoadError& e) {
          EXPECT_EQ(e.file, path);
          EXPECT_EQ(e.line, 3u) << e.what() << (gz ? " gzip" : " plain");
          EXPECT_NE(std::string(e.what()).find("a line longer than 67108864 bytes"), std::string::npos) << e.what();
        }
        std::remove(path.c_str());
      }
  for (const bool gz : {true, false}) {
    const std::string text = "a\n" + std::string(kMaxLineBytes, 'y') + "\nb";
    const std::string path = gz ? write_gz("atbound-pieces.gz", text) : write_plain("atbound-pieces.txt", text);
    const auto at = read_pieces(path, 1 << 20, 1 << 20);
    std::remove(path.c_str());
    ASSERT_EQ(at.size(), 3u);
    EXPECT_EQ(at[1].second.size(), kMaxLineBytes) << "the bound itself is read";
    EXPECT_EQ(at[2], (std::pair<size_t, std::string>{3, "b"}));
  }
}

TEST(LinePieces, ErrorsFromTheWorkerAndTheFileComeThrough) {
  EXPECT_THROW(read_pieces(temp_path("missing-pieces"), 8, 8), LoadError);
  const std::string path = write_plain("throws.txt", "a\nb\n");
  EXPECT_THROW(for_each_line_piece(path, {}, [](const LinePiece&) { throw std::runtime_error("worker"); }),
               std::runtime_error);
}

// A gzip file is decompressed on a thread of its own, a block ahead of the pieces (issue 29): a worker
// that throws ends the read (the reading thread stopped and joined, not left waiting for a free block),
// and a stream cut short is an error after the pieces of the blocks before it, naming the line after them.
TEST(LinePieces, GzipBlocksReadAheadStopOnAnErrorEitherSide) {
  std::string body;
  for (int i = 0; i < 20000; ++i) body += "line " + std::to_string(i * 7919) + "\n";
  const std::string whole = write_gz("ahead.gz", body);
  std::atomic<int> calls{0};
  EXPECT_THROW(for_each_line_piece(
                   whole, {},
                   [&](const LinePiece&) {
                     ++calls;
                     throw std::runtime_error("worker");
                   },
                   4096, 1024),
               std::runtime_error);
  EXPECT_GE(calls.load(), 1);
  std::ifstream in(whole, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = write_plain("ahead-cut.gz", bytes.substr(0, bytes.size() / 2));
  size_t lines_read = 0;
  std::mutex mu;
  try {
    for_each_line_piece(
        cut, {},
        [&](const LinePiece& p) {
          PieceLines l(p);
          std::string_view line;
          size_t n = 0;
          while (l.next(line)) ++n;
          const std::lock_guard<std::mutex> hold(mu);
          lines_read += n;
        },
        4096, 1024);
    FAIL() << "read a stream cut short";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt or truncated gzip data"), std::string::npos) << e.what();
    EXPECT_GT(lines_read, 1000u) << "the blocks before the cut are read";
    EXPECT_EQ(e.line, lines_read + 1) << "the line after the blocks handed out";
  }
}

TEST(SplitCsv, EmptyFieldsAreKept) {
  std::vector<std::string_view> f;
  split_csv("a,,b,", f);
  EXPECT_EQ(f, (std::vector<std::string_view>{"a", "", "b", ""}));
  split_csv("", f);
  EXPECT_EQ(f, (std::vector<std::string_view>{""}));
}

}  // namespace
