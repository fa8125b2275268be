#include "datasets/synth/synthetic.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace colmatch::synth {
namespace {

struct Attr {
  const char* name;
  AttrType type;
  bool consumable;
  std::vector<std::string> values;  // string-like values offered by taskers
  bool multi = false;               // set-valued (DIRAC tags)
};

const std::vector<Attr>& attrs() {
  static const std::vector<Attr> a = {
      {"arch", AttrType::String, false, {"lx-amd64", "lx-arm64", "sol-sparc64", "lx-ppc64"}},
      {"os", AttrType::CString, false, {"Debian12", "RHEL9", "rhel8", "Ubuntu22", "CentOS7"}},
      {"site", AttrType::ReString, false, {"cern.ch", "fnal.gov", "in2p3.fr", "desy.de", "ral.uk", "kit.edu"}},
      {"hostname", AttrType::Host, false, {}},
      {"cores", AttrType::Int, false, {}},
      {"speed", AttrType::Double, false, {}},
      {"ssd", AttrType::Boolean, false, {}},
      {"mem_total", AttrType::Memory, false, {}},
      {"walltime", AttrType::Time, false, {}},
      {"gpu_model", AttrType::String, false, {"A100", "V100", "T4", "P100", "H100"}},
      {"slots", AttrType::Int, true, {}},
      {"mem", AttrType::Memory, true, {}},
      {"lic", AttrType::Int, true, {}},
      {"tags", AttrType::String, false, {"AppV1", "AppV2", "AppV3", "gpu", "ssd"}, true},
  };
  return a;
}

const char* relop_text(int r) {
  static const char* ops[] = {"==", "!=", "<", "<=", ">", ">="};
  return ops[r];
}

class Gen {
 public:
  explicit Gen(const SynthSpec& s) : s_(s), rng_(s.seed) {}

  loaders::Dataset run() {
    loaders::Dataset ds;
    ds.name = fmt::format("synthetic-{}x{}-seed{}", s_.jobs, s_.taskers, s_.seed);
    for (const Attr& a : attrs()) {
      AttributeDef d;
      d.name = a.name;
      d.type = a.type;
      d.consumable = a.consumable;
      d.relop = a.consumable || (is_numeric(a.type) && a.type != AttrType::Boolean) ? Relop::LE : Relop::EQ;
      if (std::string(a.name) == "lic") d.scope = ConsumeScope::PerJob;
      if (std::string(a.name) == "mem") d.default_amount = std::ldexp(1.0, 30);  // 1G unless requested
      if (s_.sge_819 && std::string(a.name) == "lic") d.default_amount = 1;      // 8.1.9: charged where defined
      d.multi_valued = a.multi;
      ds.catalog.add(std::move(d));
    }
    if (s_.sge_819) {
      ds.catalog.reading = GridEngineReading::SoGE819;
      AttributeDef f;
      f.name = "frc";
      f.type = AttrType::Int;
      f.relop = Relop::LE;
      f.requestable = Requestable::Forced;
      frc_ = ds.catalog.add(std::move(f));
    }
    TaskerBuilder tb(ds.catalog);
    const size_t nattr = attrs().size();
    // Placement of each attribute: 0 queue, 1 host, 2 global, 3 every level (ordering relops only).
    std::vector<int> place(nattr, 0);
    if (s_.levels)
      for (size_t i = 0; i < nattr; ++i) {
        const Attr& a = attrs()[i];
        const bool ordering = is_numeric(a.type) && a.type != AttrType::Boolean;
        if (a.multi) continue;  // set-valued attributes stay on the queue level
        if (a.consumable)
          place[i] = std::string(a.name) == "lic" ? 2 * static_cast<int>(pick(2)) : (chance(0.5) ? 3 : 0);
        else place[i] = static_cast<int>(pick(ordering ? 4 : 3));
      }
    // Upper-level values: global, then per host no larger (relop <=: smaller is more restrictive).
    std::vector<double> global_num(nattr, 0);
    for (uint32_t i = 0; i < nattr; ++i) {
      const Attr& a = attrs()[i];
      if (!s_.levels || (place[i] != 2 && place[i] != 3) || chance(s_.missing)) continue;
      if (a.consumable) {  // a global pool
        global_num[i] = static_cast<double>(1 + pick(4));
        tb.set_global(i, fmt::format("{}", global_num[i]));
      } else if (is_numeric(a.type) && a.type != AttrType::Boolean) {
        global_num[i] = parse_number(a.type, tasker_value(a, 0)) * 2;
        tb.set_global(i, fmt::format("{}", global_num[i]));
      } else {
        tb.set_global(i, tasker_value(a, 0), chance(0.3) ? ValueKind::Load : ValueKind::Fixed);
      }
    }
    const size_t nhosts = s_.levels ? (s_.taskers + 3) / 4 : 0;
    std::vector<std::vector<double>> host_num(nhosts, std::vector<double>(nattr, -1));
    for (size_t h = 0; h < nhosts; ++h) {
      const uint32_t hid = tb.add_host(fmt::format("node{:05}", h));
      for (uint32_t i = 0; i < nattr; ++i) {
        const Attr& a = attrs()[i];
        if ((place[i] != 1 && place[i] != 3) || (!a.consumable && chance(s_.missing))) continue;
        const bool ordering = is_numeric(a.type) && a.type != AttrType::Boolean;
        if (a.consumable) {  // a host pool shared by the host's queues
          host_num[h][i] = static_cast<double>(8 + pick(40));
          tb.set_host(hid, i, fmt::format("{}", host_num[h][i]));
        } else if (ordering) {
          double v = parse_number(a.type, tasker_value(a, h));
          if (place[i] == 3 && global_num[i] > 0) v = std::min(v, global_num[i]);
          host_num[h][i] = v;
          tb.set_host(hid, i, fmt::format("{}", v));
          if (chance(0.3))
            tb.set_host(hid, i, fmt::format("{}", v * (0.5 + 0.25 * static_cast<double>(pick(4)))), ValueKind::Load);
        } else {
          tb.set_host(hid, i, tasker_value(a, h * 4), chance(0.5) ? ValueKind::Load : ValueKind::Fixed);
        }
      }
    }
    for (size_t t = 0; t < s_.taskers; ++t) {
      const size_t h = t / 4;
      tb.add(fmt::format("q{}@node{:05}", t % 4, h), static_cast<double>(pick(8) + 1) * 0.5,
             s_.levels ? static_cast<uint32_t>(h) : kNone);
      for (uint32_t i = 0; i < attrs().size(); ++i) {
        const Attr& a = attrs()[i];
        if (place[i] != 0 && place[i] != 3) continue;
        if (!a.consumable && chance(s_.missing)) continue;
        if (s_.sge_819 && a.consumable && std::string(a.name) == "lic" && chance(0.3)) continue;  // no licences
        if (a.multi) {                                                                            // 0-3 values
          std::vector<std::string> vals;
          for (size_t n = pick(4); n > 0; --n) vals.push_back(a.values[pick(a.values.size())]);
          if (vals.empty()) continue;
          tb.set_list(i, vals);
        } else if (place[i] == 3 && !a.consumable) {  // no larger than the levels above
          double v = parse_number(a.type, tasker_value(a, t));
          if (global_num[i] > 0) v = std::min(v, global_num[i]);
          if (host_num[h][i] >= 0) v = std::min(v, host_num[h][i]);
          tb.set(i, fmt::format("{}", v));
        } else {
          tb.set(i, tasker_value(a, t));
        }
      }
      if (s_.sge_819 && chance(0.25)) tb.set_number(frc_, 1);
    }
    ds.taskers = std::move(tb).build();

    // Request templates, then jobs drawn with Zipf popularity.
    std::vector<std::string> reqs(s_.categories), softs(s_.categories);
    std::vector<std::array<double, 3>> amounts(s_.categories);
    std::vector<uint32_t> slots(s_.categories);
    std::vector<uint8_t> fill(s_.categories, 0);
    for (size_t c = 0; c < s_.categories; ++c) {
      reqs[c] = expr(s_.max_depth);
      if (chance(s_.soft)) softs[c] = expr(std::min(s_.max_depth, 1));
      amounts[c] = {static_cast<double>(pick(3) + 1),
                    chance(0.3) ? std::nan("") : std::ldexp(1.0, 28 + static_cast<int>(pick(6))),
                    chance(0.2) ? 1.0 : std::nan("")};
      if (s_.sge_819 && chance(0.15)) amounts[c][2] = 0.0;  // lic requested as 0: needs it defined
      slots[c] = s_.with_slots ? (chance(0.8) ? 1u : static_cast<uint32_t>(pick(8) + 1)) : 1u;
      if (chance(s_.fill_up)) {
        fill[c] = 1;
        slots[c] = static_cast<uint32_t>(2 + pick(24));  // parallel jobs wider than most taskers
        if (s_.one_per_tasker > 0 && chance(s_.one_per_tasker)) fill[c] = 2;
      }
    }
    std::vector<double> cdf(s_.categories);
    double acc = 0;
    for (size_t c = 0; c < s_.categories; ++c) cdf[c] = acc += 1.0 / std::pow(static_cast<double>(c + 1), s_.zipf_s);
    JobBuilder jb(ds.catalog);
    const uint32_t a_slots = *ds.catalog.find("slots"), a_mem = *ds.catalog.find("mem"),
                   a_lic = *ds.catalog.find("lic");
    for (size_t j = 0; j < s_.jobs; ++j) {
      const double u = std::uniform_real_distribution<double>(0, acc)(rng_);
      const size_t c = std::min<size_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin(), s_.categories - 1);
      const uint32_t jid =
          jb.add(fmt::format("job{}", j), fmt::format("user{}", pick(50)), fmt::format("grp{}", pick(8)),
                 static_cast<double>(pick(5)), static_cast<double>(j), slots[c]);
      try {
        jb.set_request(reqs[c]);
        if (!softs[c].empty()) jb.set_soft(softs[c]);
        if (fill[c] != 0) jb.set_rule(fill[c] == 2 ? AllocationRule::OnePerTasker : AllocationRule::FillUp);
      } catch (const RequestError& e) {
        jb.reject(jid, e.what());
      }
      (void)a_slots;
      if (!std::isnan(amounts[c][1])) jb.set_amount(a_mem, amounts[c][1]);  // else the catalog default
      if (!std::isnan(amounts[c][2])) jb.set_amount(a_lic, amounts[c][2]);
    }
    ds.jobs = std::move(jb).build();
    return ds;
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  std::string tasker_value(const Attr& a, size_t t) {
    switch (a.type) {
      case AttrType::String:
      case AttrType::CString:
      case AttrType::ReString: return a.values[pick(a.values.size())];
      case AttrType::Host: return fmt::format("Node{:05}.Farm", t / 4);
      case AttrType::Int:
        return a.consumable ? fmt::format("{}", std::string(a.name) == "lic" ? pick(3) : 4 + pick(29))
                            : fmt::format("{}", 1u << (2 + pick(6)));
      case AttrType::Double: return fmt::format("{:.1f}", 1.0 + static_cast<double>(pick(30)) / 10);
      case AttrType::Boolean: return chance(0.5) ? "true" : "false";
      case AttrType::Memory: return fmt::format("{}G", 1u << (2 + pick(7)));
      case AttrType::Time: return fmt::format("{}:00:00", 1 + pick(72));
    }
    return "";
  }

  // A Grid Engine 8.1.9 wildcard expression over the attribute's values: 1-3 operands joined by & or
  // |, each maybe negated or parenthesized, each a value, a prefix + '*', a '?' in place of a
  // character, a [^c]* or a [cx]* set.
  std::string sge_expression(const Attr& a) {
    auto value = [&] {
      if (a.type == AttrType::Host) return fmt::format("node{:05}.farm", pick(s_.taskers / 4 + 1));
      std::string v = a.values[pick(a.values.size())];
      if (a.type == AttrType::CString && chance(0.5))
        for (auto& ch : v) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      return v;
    };
    auto operand = [&]() -> std::string {
      const std::string v = value();
      switch (pick(6)) {
        case 0: return v;
        case 1: return v.substr(0, 1 + pick(v.size())) + "*";
        case 2: {
          std::string q = v;
          q[pick(q.size())] = '?';
          return q;
        }
        case 3: return fmt::format("[^{}]*", v[0]);
        case 4: return fmt::format("[{}x]*", v[0]);
        default: return "*" + v.substr(pick(v.size()));
      }
    };
    std::string out;
    for (size_t i = 0, n = 1 + pick(3); i < n; ++i) {
      if (i) out += chance(0.5) ? "&" : "|";
      std::string x = operand();
      if (chance(0.2)) x = fmt::format("({}|{})", x, operand());
      if (chance(0.3)) x = "!" + x;
      out += x;
    }
    return out;
  }

  std::string value_for(const Attr& a) {
    if (s_.sge_819 && is_string_like(a.type) && chance(0.5)) return fmt::format("\"{}\"", sge_expression(a));
    switch (a.type) {
      case AttrType::String:
      case AttrType::CString: {
        const std::string v = a.values[pick(a.values.size())];
        if (a.type == AttrType::CString && chance(0.5)) {  // caseless: vary the case of the request
          std::string u = v;
          for (auto& ch : u) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
          return u;
        }
        if (chance(0.25)) return fmt::format("{{{},{}}}", v, a.values[pick(a.values.size())]);
        return v;
      }
      case AttrType::ReString: {
        static const char* pats[] = {"*.ch", "*.gov|*.fr", "[cdf]*", "?e??.*", "ral.uk", "*", "k?t.edu|desy*"};
        return fmt::format("\"{}\"", pats[pick(7)]);
      }
      case AttrType::Host: {  // lists of hosts exercise the large-dictionary (gather) lookup
        const auto host = [&] { return fmt::format("node{:05}.farm", pick(s_.taskers / 4 + 1)); };
        if (chance(0.3)) return fmt::format("{{{},{},{}}}", host(), host(), host());
        return host();
      }
      default: return tasker_value(a, pick(s_.taskers + 1));
    }
  }

  std::string clause() {
    if (s_.sge_819 && chance(0.1)) return "frc>=0";  // requests the FORCED attribute
    const Attr& a = attrs()[pick(attrs().size())];
    int op = 0;
    if (is_string_like(a.type)) op = chance(0.8) ? 0 : 1;
    else if (a.type == AttrType::Boolean) op = 0;
    else op = static_cast<int>(pick(6));
    std::string v = value_for(a);
    if (v.front() == '{' && op > 1) op = 0;
    return fmt::format("{}{}{}", a.name, relop_text(op), v);
  }

  std::string expr(int depth) {
    const size_t n = 1 + pick(3);
    std::string out;
    for (size_t i = 0; i < n; ++i) {
      if (i) out += " && ";
      if (depth > 0 && chance(0.3)) {
        out += fmt::format("({} || {})", expr(depth - 1), expr(depth - 1));
      } else if (depth > 0 && chance(0.15)) {
        out += fmt::format("!({})", expr(depth - 1));
      } else {
        out += clause();
      }
    }
    return out;
  }

  SynthSpec s_;
  std::mt19937_64 rng_;
  uint32_t frc_ = 0;
};

}  // namespace

loaders::Dataset generate(const SynthSpec& spec) { return Gen(spec).run(); }

}  // namespace colmatch::synth
