#include "loaders/sge_xml.hpp"

#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <string_view>

#include <expat.h>
#include <fmt/format.h>

#include "loaders/errors.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders::sge {
namespace {

bool is_space(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

// A stream over one XML file: calls `open(path of element names, attributes)` at each start tag and
// `close(path, text)` at each end tag with the element's own text. The path is the names from the root.
class XmlStream {
 public:
  using Open = std::function<void(const std::vector<std::string>&, const char**, size_t line)>;
  using Close = std::function<void(const std::vector<std::string>&, const std::string&, size_t line)>;

  XmlStream(std::string path, Open open, Close close)
      : path_(std::move(path)), open_(std::move(open)), close_(std::move(close)) {}

  void run() {
    require_not_directory(path_);
    std::unique_ptr<XML_ParserStruct, void (*)(XML_Parser)> p(XML_ParserCreate("UTF-8"), XML_ParserFree);
    if (!p) throw LoadError(path_, 0, "", "out of memory for the XML parser");
    parser_ = p.get();
    XML_SetUserData(parser_, this);
    XML_SetElementHandler(parser_, &XmlStream::on_start, &XmlStream::on_end);
    XML_SetCharacterDataHandler(parser_, &XmlStream::on_text);
    LineReader in(path_);
    std::string_view line;
    uint64_t bytes = 0;
    std::string buf;
    while (in.next(line)) {
      bytes += line.size() + 1;
      if (bytes > kMaxXmlBytes) throw LoadError(path_, in.line(), "", "more than 4 GiB of XML");
      buf.assign(line).push_back('\n');
      feed(buf.data(), buf.size(), false);
    }
    feed("", 0, true);
    if (!seen_root_) throw LoadError(path_, 0, "", "no XML in the file");
  }

 private:
  void feed(const char* data, size_t n, bool last) {
    if (XML_Parse(parser_, data, static_cast<int>(n), last ? 1 : 0) == XML_STATUS_OK) {
      if (error_.empty()) return;
    }
    if (thrown_) std::rethrow_exception(thrown_);
    if (error_.empty()) error_ = fmt::format("malformed XML: {}", XML_ErrorString(XML_GetErrorCode(parser_)));
    throw LoadError(path_, error_line_ ? error_line_ : XML_GetCurrentLineNumber(parser_), error_field_, error_);
  }
  void caught(std::exception_ptr e) {
    if (!error_.empty()) return;
    thrown_ = e;
    error_ = "(rethrown)";
    XML_StopParser(parser_, XML_FALSE);
  }
  void fail(std::string field, std::string why) {
    if (!error_.empty()) return;
    error_ = std::move(why);
    error_field_ = std::move(field);
    error_line_ = XML_GetCurrentLineNumber(parser_);
    XML_StopParser(parser_, XML_FALSE);
  }
  static void on_start(void* self, const XML_Char* name, const XML_Char** attrs) {
    auto& s = *static_cast<XmlStream*>(self);
    s.seen_root_ = true;
    // The parent's text so far is the indentation before this child: no reader reads the text of an
    // element with children, so it is dropped, and the parent keeps none (14,000 jobs' worth of
    // indentation is not one element's text).
    if (!s.text_.empty()) {
      s.text_.back().clear();
      s.has_children_.back() = true;
    }
    s.stack_.emplace_back(name);  // (pushed even past the bound: on_end pops it)
    s.text_.emplace_back();
    s.has_children_.push_back(false);
    if (s.stack_.size() > kMaxXmlDepth) return s.fail(name, "XML nested more than 64 levels deep");
    if (!s.error_.empty()) return;
    try {
      s.open_(s.stack_, attrs, XML_GetCurrentLineNumber(s.parser_));
    } catch (const LoadError&) {
      s.caught(std::current_exception());
    }
  }
  static void on_end(void* self, const XML_Char*) {
    auto& s = *static_cast<XmlStream*>(self);
    if (s.error_.empty()) try {
        s.close_(s.stack_, s.text_.back(), XML_GetCurrentLineNumber(s.parser_));
      } catch (const LoadError&) {
        s.caught(std::current_exception());
      }
    s.stack_.pop_back();
    s.text_.pop_back();
    s.has_children_.pop_back();
  }
  static void on_text(void* self, const XML_Char* text, int n) {
    auto& s = *static_cast<XmlStream*>(self);
    if (s.text_.empty() || !s.error_.empty() || s.has_children_.back()) return;
    std::string& t = s.text_.back();
    if (t.empty() && is_space(std::string_view(text, static_cast<size_t>(n)))) return;  // leading indentation
    if (t.size() + static_cast<size_t>(n) > kMaxXmlText)
      return s.fail(s.stack_.back(), "an element's text is longer than 64 KiB");
    t.append(text, static_cast<size_t>(n));
  }

  std::string path_;
  Open open_;
  Close close_;
  XML_Parser parser_ = nullptr;
  std::vector<std::string> stack_, text_;
  std::vector<bool> has_children_;  // per open element: a child has opened (its text is indentation)
  bool seen_root_ = false;
  std::string error_, error_field_;
  size_t error_line_ = 0;
  std::exception_ptr thrown_;
};

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

const char* attribute(const char** attrs, const char* name) {
  for (; attrs && attrs[0]; attrs += 2)
    if (std::strcmp(attrs[0], name) == 0) return attrs[1];
  return nullptr;
}

void require_root(const std::string& path, const std::vector<std::string>& stack, const char* root) {
  if (stack.size() == 1 && stack[0] != root)
    throw LoadError(path, 0, stack[0], fmt::format("the root element is <{}>, expected <{}>", stack[0], root));
}

}  // namespace

std::vector<QstatJob> read_qstat_jobs(const std::string& path) {
  std::vector<QstatJob> out;
  bool in_job = false;
  size_t depth = 0;  // of the open job_list
  std::string pending_name;
  XmlStream(
      path,
      [&](const std::vector<std::string>& st, const char** attrs, size_t line) {
        require_root(path, st, "job_info");
        if (!in_job && st.back() == "job_list") {
          in_job = true;
          depth = st.size();
          out.emplace_back();
          out.back().line = line;
          if (const char* s = attribute(attrs, "state")) out.back().list_state = s;
        } else if (in_job && st.size() == depth + 1) {
          const char* n = attribute(attrs, "name");
          pending_name = n ? n : "";
          if ((st.back() == "hard_request" || st.back() == "soft_request" || st.back() == "requested_pe") && !n)
            throw LoadError(path, line, st.back(), "has no name attribute");
        }
      },
      [&](const std::vector<std::string>& st, const std::string& text, size_t line) {
        if (!in_job) return;
        QstatJob& j = out.back();
        if (st.size() == depth) {
          in_job = false;
          if (j.number.empty()) throw LoadError(path, j.line, "JB_job_number", "a job_list without a job number");
          return;
        }
        if (st.size() != depth + 1) return;
        const std::string& e = st.back();
        const std::string v = trimmed(text);
        if (e == "JB_job_number") j.number = v;
        else if (e == "tasks") j.tasks = v;
        else if (e == "JB_name") j.name = v;
        else if (e == "JB_owner") j.owner = v;
        else if (e == "state") j.state = v;
        else if (e == "JB_submission_time") j.submitted = v;
        else if (e == "JAT_start_time") j.started = v;
        else if (e == "queue_name") j.queue = v;
        else if (e == "slots") j.slots = v;
        else if (e == "JAT_prio") j.prio = v;
        else if (e == "hard_request") j.hard.emplace_back(pending_name, v);
        else if (e == "soft_request") j.soft.emplace_back(pending_name, v);
        else if (e == "hard_req_queue") j.hard_queues.push_back(v);
        else if (e == "master_hard_req_queue") j.master_queues.push_back(v);
        else if (e == "soft_req_queue") j.soft_queues.push_back(v);
        else if (e == "requested_pe") {
          if (!j.pe.empty()) throw LoadError(path, line, e, "a job with two parallel environments");
          j.pe = pending_name;
          j.pe_range = v;
        }
      })
      .run();
  return out;
}

std::vector<QueueInstanceState> read_queue_states(const std::string& path) {
  std::vector<QueueInstanceState> out;
  bool in_queue = false;
  size_t depth = 0;
  XmlStream(
      path,
      [&](const std::vector<std::string>& st, const char**, size_t line) {
        require_root(path, st, "job_info");
        if (!in_queue && st.back() == "Queue-List") {
          in_queue = true;
          depth = st.size();
          out.push_back({{}, {}, line});
        }
      },
      [&](const std::vector<std::string>& st, const std::string& text, size_t) {
        if (!in_queue) return;
        if (st.size() == depth) {
          in_queue = false;
          if (out.back().name.empty()) throw LoadError(path, out.back().line, "name", "a Queue-List without a name");
        } else if (st.size() == depth + 1 && st.back() == "name") {
          out.back().name = trimmed(text);
        } else if (st.size() == depth + 1 && st.back() == "state") {
          out.back().state = trimmed(text);
        }
      })
      .run();
  return out;
}

std::vector<QhostHost> read_qhost(const std::string& path) {
  std::vector<QhostHost> out;
  std::string name, dominance;
  XmlStream(
      path,
      [&](const std::vector<std::string>& st, const char** attrs, size_t line) {
        require_root(path, st, "qhost");
        if (st.size() == 2 && st[1] == "host") {
          const char* n = attribute(attrs, "name");
          if (!n || !*n) throw LoadError(path, line, "host", "a host without a name");
          out.push_back({n, {}, line});
        } else if (st.size() == 3 && st[1] == "host" && st[2] == "resourcevalue") {
          const char* n = attribute(attrs, "name");
          const char* d = attribute(attrs, "dominance");
          if (!n || !d || std::strlen(d) != 2)
            throw LoadError(path, line, "resourcevalue", "needs a name and a two-letter dominance");
          name = n;
          dominance = d;
        }
      },
      [&](const std::vector<std::string>& st, const std::string& text, size_t) {
        if (st.size() == 3 && st[1] == "host" && st[2] == "resourcevalue")
          out.back().values.push_back({name, dominance, trimmed(text)});
      })
      .run();
  return out;
}

std::vector<JobDetail> read_job_details(const std::string& path) {
  std::vector<JobDetail> out;
  // detailed_job_info / djob_info / element / JB_...
  XmlStream(
      path,
      [&](const std::vector<std::string>& st, const char**, size_t line) {
        require_root(path, st, "detailed_job_info");
        if (st.size() == 3 && st[1] == "djob_info" && st[2] == "element") {
          out.emplace_back();
          out.back().line = line;
        }
      },
      [&](const std::vector<std::string>& st, const std::string& text, size_t) {
        if (st.size() == 3 && st[1] == "djob_info" && st[2] == "element" && out.back().number.empty())
          throw LoadError(path, out.back().line, "JB_job_number", "a job without a job number");
        if (st.size() != 4 || st[1] != "djob_info" || st[2] != "element") return;
        JobDetail& d = out.back();
        const std::string& e = st[3];
        const std::string v = trimmed(text);
        if (e == "JB_job_number") d.number = v;
        else if (e == "JB_owner") d.owner = v;
        else if (e == "JB_group") d.group = v;
        else if (e == "JB_account") d.account = v;
        else if (e == "JB_project") d.project = v;
        else if (e == "JB_priority") d.priority = v;
        else if (e == "JB_submission_time") d.submission = v;
        else if (e == "JB_deadline") d.deadline = v;
        else if (e == "JB_jobshare") d.jobshare = v;
        else if (e == "JB_override_tickets") d.override_tickets = v;
      })
      .run();
  return out;
}

}  // namespace colmatch::loaders::sge
