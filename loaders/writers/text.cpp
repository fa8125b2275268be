#include "loaders/writers/text.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>

#include <fmt/format.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

namespace colmatch::writers {

void csv_field(std::string& out, std::string_view v) {
  // (appending a character at a time costs a capacity check each: a 90-character pending reason took
  // more than a job's whole row)
  if (plain_field(v)) {
    out += v;
    return;
  }
  out += '"';
  for (size_t at = 0;;) {  // each run up to and including a quote, then the quote doubled
    const size_t q = v.find('"', at);
    if (q == std::string_view::npos) {
      out += v.substr(at);
      break;
    }
    out += v.substr(at, q + 1 - at);
    out += '"';
    at = q + 1;
  }
  out += '"';
}

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else out += c;
    }
  }
  return out;
}

std::string json_string(std::string_view s) { return fmt::format("\"{}\"", json_escape(s)); }

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw WriteError(tmp, "cannot create file");
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw WriteError(tmp, "write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw WriteError(path, "cannot rename into place: " + ec.message());
  }
}

std::string json_number(double v, int decimals) {
  if (!std::isfinite(v)) return "null";
  return decimals < 0 ? fmt::format("{}", v) : fmt::format("{:.{}f}", v, decimals);
}

namespace {

namespace fs = std::filesystem;

// Files a colmatch run writes into an output folder: an existing folder holding anything else is refused.
const std::set<std::string>& own_files() {
  // colmatch report adds report.html and its figures (tools/report.py): a new run replaces them too.
  static const std::set<std::string> names{
      "results.csv",   "categories.csv",   "summary.json",         "pools.csv",
      "schedule.csv",  "metrics.json",     "timeline.csv",         "cycles.csv",
      "farm.toml",     "taskers.jsonl",    "hosts.jsonl",          "jobs.jsonl",
      "report.html",   "fig_eligible.png", "fig_reasons.png",      "fig_utilisation.png",
      "fig_queue.png", "fig_waits.png",    "fig_shares_queue.png", "fig_shares_user.png",
      "fig_cycles.png"};
  return names;
}

// A temporary of colmatch report (tools/report.py: `.report-<pid>-<random>.<ext>.tmp`) left by a report
// that was killed: a run replaces the folder with it (removed with the previous set; a link is unlinked,
// never followed) instead of refusing the folder for ever.
bool report_temporary(const std::string& name) {
  constexpr std::string_view head = ".report-", tail = ".tmp";
  return name.size() > head.size() + tail.size() && name.compare(0, head.size(), head) == 0 &&
         name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}

// Signal cleanup: the private folder being written and every file a run may have in it (the names
// colmatch writes: after a publish by exchange the folder holds the previous set), as fixed C strings
// (a handler may only call async-signal-safe functions: unlink, rmdir, signal, raise).
constexpr size_t kMaxFiles = 32, kPathMax = 4096;
char g_tmp[kPathMax];
char g_files[kMaxFiles][kPathMax];
volatile sig_atomic_t g_nfiles = 0, g_active = 0;

// Every catchable signal whose default ends the process (signal(7)): each leaves the private folder behind
// unless handled (issue 45: SIGHUP, SIGQUIT, SIGUSR1, SIGALRM and SIGXFSZ did). A signal the caller
// ignores (nohup's SIGHUP, a shell's `trap "" XFSZ`) stays ignored: a write past ulimit -f then fails
// with EFBIG and is reported as any failed write; one the caller handles is left to its handler.
constexpr int kSignals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,   SIGUSR1, SIGUSR2, SIGALRM,
                            SIGPIPE, SIGXFSZ, SIGXCPU, SIGVTALRM, SIGPROF, SIGPOLL};
constexpr size_t kNumSignals = sizeof(kSignals) / sizeof(kSignals[0]);
struct sigaction g_old[kNumSignals];
bool g_installed[kNumSignals];

extern "C" void cleanup_on_signal(int sig) {
  if (g_active) {
    for (sig_atomic_t i = 0; i < g_nfiles; ++i) ::unlink(g_files[i]);
    ::rmdir(g_tmp);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_cleanup() {
  struct sigaction sa {};
  sa.sa_handler = cleanup_on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < kNumSignals; ++i) {
    g_installed[i] = false;
    if (::sigaction(kSignals[i], nullptr, &g_old[i]) != 0 || g_old[i].sa_handler == SIG_IGN) continue;
    // beyond SIGINT and SIGTERM, a handler of the caller's (a profiler's SIGPROF, an embedding program's
    // SIGALRM) is theirs: only a signal left to its default, which would end the process, is taken
    const bool interrupt = kSignals[i] == SIGINT || kSignals[i] == SIGTERM;
    if (!interrupt && ((g_old[i].sa_flags & SA_SIGINFO) || g_old[i].sa_handler != SIG_DFL)) continue;
    g_installed[i] = ::sigaction(kSignals[i], &sa, nullptr) == 0;
  }
}

void restore_signals() {
  for (size_t i = 0; i < kNumSignals; ++i)
    if (g_installed[i]) ::sigaction(kSignals[i], &g_old[i], nullptr);
}

// Private folders of this output folder that an ended run left (killed by SIGKILL, or a power cut): the
// caller holds the folder's lock, so no run is writing any of them. Only directories of this user are
// removed (a link planted at such a name is unlinked, never followed).
void remove_stale_private_folders(const fs::path& parent, const std::string& name) {
  const std::string prefix = "." + name + ".new-";
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().filename().string();
    if (entry.rfind(prefix, 0) != 0) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || st.st_uid != ::geteuid()) continue;
    std::error_code ignored;
    if (S_ISLNK(st.st_mode)) fs::remove(it->path(), ignored);
    else if (S_ISDIR(st.st_mode)) fs::remove_all(it->path(), ignored);
  }
}

std::string errno_text() { return std::strerror(errno); }

// The lock beside an output folder, shared by every user who writes there: made readable by all (0644;
// one of ours left 0600 by an earlier colmatch is widened), and taken read-only by a user who may not
// write it (flock needs no more). A lock nobody else may read is an error saying whose it is; it is not
// removed, since a run may hold it. Returns the descriptor; throws WriteError.
int open_lock(const std::string& lock) {
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 && errno == EACCES) fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    const std::string why = errno_text();
    struct stat st {};
    if (errno == EACCES && ::lstat(lock.c_str(), &st) == 0)
      throw WriteError(lock, fmt::format("cannot open the lock file: {} (it belongs to user {} with mode {:o}: they "
                                         "can remove it or make it readable, chmod 644)",
                                         why, st.st_uid, st.st_mode & 0777));
    throw WriteError(lock, "cannot open the lock file: " + why);
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & 0777) != 0644) ::fchmod(fd, 0644);
  return fd;
}

}  // namespace

OutputSet::OutputSet(const std::string& dir) {
  static_assert(kMaxFiles >= 21, "every name own_files() lists fits the handler's table");
  fs::path out = fs::absolute(fs::path(dir)).lexically_normal();
  if (out.has_filename() == false) out = out.parent_path();  // "out/" -> "out"
  dir_ = out.string();
  const fs::path parent = out.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw WriteError(parent.string(), "cannot create folder: " + ec.message());
  const std::string lock = (parent / ("." + out.filename().string() + ".lock")).string();
  lock_fd_ = open_lock(lock);
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw WriteError(dir_, "another colmatch run is writing this folder (lock " + lock + ")");
  }
  // The private folder's name is chosen here (process id and random bits, so not guessable) and handed
  // to the signal handler before the folder is made: a signal at any moment finds every folder made.
  // (mkdtemp names it only once it exists, leaving a moment where a signal would leave it behind.)
  // mkdir fails on anything already at the path, a symlink included.
  remove_stale_private_folders(parent, out.filename().string());
  install_cleanup();
  std::random_device bits;
  for (int attempt = 0;; ++attempt) {
    const std::string name =
        (parent / fmt::format(".{}.new-{:x}{:08x}", out.filename().string(), static_cast<unsigned>(::getpid()), bits()))
            .string();
    if (name.size() + 24 < kPathMax) {
      g_active = 0;  // while the table changes
      std::memcpy(g_tmp, name.c_str(), name.size() + 1);
      sig_atomic_t n = 0;
      for (const std::string& f : own_files()) {
        const std::string path = name + "/" + f;
        std::memcpy(g_files[n], path.c_str(), path.size() + 1);
        ++n;
      }
      g_nfiles = n;
      g_active = 1;
    }
    if (::mkdir(name.c_str(), 0700) == 0) {
      tmp_ = name;
      break;
    }
    if (errno != EEXIST || attempt >= 100) {
      const std::string why = errno_text();
      g_active = 0;
      restore_signals();
      ::close(lock_fd_);
      throw WriteError(name, "cannot create a private folder: " + why);
    }
  }
}

OutputSet::~OutputSet() {
  if (!published_ && !tmp_.empty()) {  // removed while the handler still knows it: no moment without
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
  g_active = 0;
  restore_signals();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
}

class OutputSet::FileSink {
 public:
  FileSink(int fd, const std::string& path) : fd_(fd), path_(path) {}
  void append(std::string_view content) {
    size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd_, content.data() + done, content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw WriteError(path_, "write failed: " + errno_text());
      done += static_cast<size_t>(n);
    }
    appended_.fetch_add(static_cast<off_t>(content.size()), std::memory_order_release);
  }
  // Starts writing back what was appended and not yet started (not waiting for it: the fsync after
  // the body then waits for the last parts only, not the whole file). Advisory: an error shows at
  // fsync. A thread finding another at it returns at once.
  void start_writeback() noexcept {
    const std::unique_lock<std::mutex> hold(started_lock_, std::try_to_lock);
    if (!hold.owns_lock()) return;
    const off_t upto = appended_.load(std::memory_order_acquire);
    if (upto <= started_) return;
    ::sync_file_range(fd_, started_, upto - started_, SYNC_FILE_RANGE_WRITE);
    started_ = upto;
  }

 private:
  const int fd_;
  const std::string& path_;
  std::atomic<off_t> appended_{0};
  std::mutex started_lock_;
  off_t started_ = 0;  // writeback started up to here (under started_lock_)
};

void OutputSet::add(const std::string& name, const std::string& content) {
  write_file(name, [&](FileSink& file) {
    file.append(content);
    file.start_writeback();
  });
}

void OutputSet::add_pieces(const std::string& name, size_t pieces, const PieceFn& fill) {
  write_file(name, [&](FileSink& file) {
    size_t next = 0;
    const size_t tokens = 2 * static_cast<size_t>(tbb::this_task_arena::max_concurrency()) + 1;
    tbb::parallel_pipeline(
        tokens,
        tbb::make_filter<void, size_t>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) -> size_t {
          if (next == pieces) fc.stop();
          return next++;
        }) & tbb::make_filter<size_t, std::string>(tbb::filter_mode::parallel, [&](size_t i) {
          std::string text;
          if (i < pieces) fill(i, text);
          file.start_writeback();  // of the pieces appended so far: not on the appending thread
          return text;
        }) & tbb::make_filter<std::string, void>(tbb::filter_mode::serial_in_order, [&](const std::string& text) {
          file.append(text);
        }));
  });
}

void OutputSet::write_file(const std::string& name, const std::function<void(FileSink&)>& body) {
  if (name.empty() || name.find('/') != std::string::npos) throw WriteError(name, "not a plain file name");
  if (!own_files().count(name)) throw WriteError(name, "not a file colmatch writes");  // the handler's table
  const std::string path = tmp_ + "/" + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw WriteError(path, "cannot create file: " + errno_text());
  struct Closer {  // the descriptor is closed on every way out (a failed write, an exception from body)
    int fd;
    ~Closer() {
      if (fd >= 0) ::close(fd);
    }
  } closer{fd};
  FileSink sink(fd, path);
  body(sink);
  closer.fd = -1;
  if (::fsync(fd) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    throw WriteError(path, "write failed: " + why);
  }
  if (::close(fd) != 0) throw WriteError(path, "write failed: " + errno_text());
}

void OutputSet::publish() {
  auto sync_dir = [](const std::string& d) {
    const int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
  };
  const mode_t mask = ::umask(0);  // the published folder gets the usual mode, not mkdtemp's 0700
  ::umask(mask);
  ::chmod(tmp_.c_str(), 0777 & ~mask);
  sync_dir(tmp_);
  std::error_code ec;
  const auto st = fs::symlink_status(dir_, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) throw WriteError(dir_, "exists and is not a folder");
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
      const std::string name = e.path().filename().string();
      if (report_temporary(name)) continue;
      if (!own_files().count(name) || !fs::is_regular_file(e.symlink_status()))
        throw WriteError(dir_, "holds '" + name + "', which colmatch did not write: choose a new or empty folder");
    }
    if (::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0)
      throw WriteError(dir_, "cannot publish the outputs: " + errno_text());
    fs::remove_all(tmp_, ec);  // the previous set, now in the private folder's place
  } else {
    if (::rename(tmp_.c_str(), dir_.c_str()) != 0)
      throw WriteError(dir_, "cannot publish the outputs: " + errno_text());
  }
  published_ = true;
  sync_dir(fs::path(dir_).parent_path().string());
}

}  // namespace colmatch::writers
