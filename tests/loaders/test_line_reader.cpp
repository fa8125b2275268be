// LineReader and split_csv (loaders/line_reader.hpp): plain and gzip input alike, line numbers, CRLF,
// lines longer than the read buffer, and errors that name the file.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <zlib.h>

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
  EXPECT_TRUE(read_all(write_plain("empty.txt", "")).empty());
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
}

TEST(LineReader, ProgressReportsBytesRead) {
  uint64_t last = 0;
  LineReader r(write_plain("progress.txt", "abc\ndef\n"),
               [&](const std::string&, uint64_t, uint64_t bytes) { last = bytes; });
  std::string_view line;
  while (r.next(line)) {}
  EXPECT_EQ(last, 8u);
}

TEST(SplitCsv, EmptyFieldsAreKept) {
  std::vector<std::string_view> f;
  split_csv("a,,b,", f);
  EXPECT_EQ(f, (std::vector<std::string_view>{"a", "", "b", ""}));
  split_csv("", f);
  EXPECT_EQ(f, (std::vector<std::string_view>{""}));
}

}  // namespace
