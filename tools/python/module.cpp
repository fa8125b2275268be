// The Python module colmatch (its compiled part, colmatch._colmatch): match and simulate from Python,
// with the results as NumPy arrays that view the engine's own columns (no copy; each array keeps its
// run alive) and the outputs' texts for pandas frames. The GIL is released while loading and running.
// Loader errors raise colmatch.LoadError with the file, line and field the CLI names.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <thread>

#include <tbb/global_control.h>

#include "engine/batch/matcher.hpp"
#include "engine/schedule/simulation.hpp"
#include "loaders/errors.hpp"
#include "loaders/formats.hpp"
#include "loaders/memory.hpp"
#include "loaders/policy.hpp"
#include "loaders/writers/results.hpp"
#include "loaders/writers/simulation_writer.hpp"

namespace py = pybind11;
using namespace colmatch;

namespace {

// Ctrl-C while the GIL is released (issue 28: a long call could only be killed): between phases, and from
// the loaders' and the simulator's progress callbacks, the calling thread takes the GIL for a moment and
// lets Python run its signal handlers; a KeyboardInterrupt they raise ends the call there, unwinding the
// engine, and reaches the caller. Other threads (oneTBB's) never check: Python handles signals on its
// main thread only.
class SignalChecks {
 public:
  void operator()() const {
    if (std::this_thread::get_id() != caller_) return;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
  loaders::ProgressFn load() const {
    return [this](const std::string&, uint64_t, uint64_t) { (*this)(); };
  }
  SimProgress simulate() const {
    return [this](double, uint64_t, uint64_t) { (*this)(); };
  }

 private:
  std::thread::id caller_ = std::this_thread::get_id();
};

// One match: the loaded farm and the outcome the arrays view.
struct Match {
  loaders::Dataset ds;
  MatchOutcome m;
};

// One simulation.
struct Simulation {
  loaders::Dataset ds;
  SimResult r;
};

// A read-only array of `n` values of T at `data`, owned by `owner` (kept alive while the array is).
template <class T>
py::array view(const T* data, size_t n, py::handle owner) {
  py::array_t<T> a({n}, {sizeof(T)}, data, owner);
  a.attr("setflags")(py::arg("write") = false);
  return a;
}

std::optional<tbb::global_control> threads_limit(unsigned threads) {
  if (threads == 0) return std::nullopt;
  return std::optional<tbb::global_control>(std::in_place, tbb::global_control::max_allowed_parallelism, threads);
}

// Loads `args` (the CLI's input options without dashes) in `format`. A keyword the format does not take
// is a TypeError naming the ones it does (issue 28: a misspelt `taskrs=` was dropped and the run went
// on without it); `policy` is taken by every format, as the CLI's --policy is.
loaders::Dataset load(const std::string& format, const std::map<std::string, std::string>& args, loaders::LoadMode mode,
                      const SignalChecks& checks) {
  const loaders::InputFormat* f = loaders::find_format(format);
  if (f == nullptr) {
    std::string known;
    for (const auto& x : loaders::input_formats()) known += (known.empty() ? "" : ", ") + x.name;
    throw std::invalid_argument("unknown format '" + format + "' (formats: " + known + ")");
  }
  if (const std::string key = loaders::foreign_option(*f, args); !key.empty())
    throw py::type_error("unknown keyword '" + key + "' for format " + format +
                         " (accepted: " + loaders::option_list(*f, false) + ", policy, threads)");
  loaders::Dataset ds = loaders::load_format(*f, args, checks.load(), mode);
  checks();
  return ds;
}

// A float64 vector from any array-like (copied once: the loader's builders own their columns).
std::vector<double> doubles(const py::handle& h) {
  if (h.is_none()) return {};
  auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(h);
  if (!a) throw py::type_error("expected an array of numbers");
  if (a.ndim() != 1) throw py::value_error("expected a one-dimensional array");
  return std::vector<double>(a.data(), a.data() + a.size());
}

std::vector<std::string> strings(const py::dict& d, const char* key) {
  return d.contains(key) && !d[key].is_none() ? d[key].cast<std::vector<std::string>>() : std::vector<std::string>{};
}

std::vector<double> numbers(const py::dict& d, const char* key) {
  return d.contains(key) ? doubles(d[key]) : std::vector<double>{};
}

// The Python package's in-memory farm (colmatch.Farm) as the loader's MemoryInputs.
loaders::MemoryInputs memory_inputs(const py::dict& d) {
  loaders::MemoryInputs in;
  in.farm_toml = d["farm_toml"].cast<std::string>();
  in.tasker_names = strings(d, "tasker_names");
  in.tasker_power = numbers(d, "tasker_power");
  in.tasker_hosts = strings(d, "tasker_hosts");
  auto columns = [](const py::handle& list) {
    std::vector<loaders::AttributeColumn> out;
    for (const auto& c : list.cast<py::list>()) {
      const auto t = c.cast<py::tuple>();  // (name, numbers or None, texts or None)
      loaders::AttributeColumn col;
      col.name = t[0].cast<std::string>();
      col.numbers = doubles(t[1]);
      if (!t[2].is_none()) col.texts = t[2].cast<std::vector<std::optional<std::string>>>();
      out.push_back(std::move(col));
    }
    return out;
  };
  in.attributes = columns(d["columns"]);
  in.job_ids = strings(d, "job_ids");
  in.requests = strings(d, "requests");
  in.soft = strings(d, "soft");
  in.owners = strings(d, "owners");
  in.groups = strings(d, "groups");
  in.queues = strings(d, "queues");
  in.accounts = strings(d, "accounts");
  in.slots = numbers(d, "slots");
  in.priority = numbers(d, "priority");
  in.submit = numbers(d, "submit");
  in.runtime = numbers(d, "runtime");
  in.walltime = numbers(d, "walltime");
  in.resources = columns(d["resources"]);
  return in;
}

}  // namespace

PYBIND11_MODULE(_colmatch, m) {
  m.doc() = "colmatch: columnar matching of batch jobs to taskers (compiled part; use the colmatch package)";
  // NumPy's C API is looked up once, in a function-local static, on the first array made. Made first by
  // two threads at once (issue 45), one held the static's guard while importing numpy (which lets other
  // threads run) and the other waited on the guard holding the GIL: both hung. Made here, under the
  // import lock, before any thread can call in.
  (void)py::array_t<double>(0);
  static py::object load_error = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "colmatch.LoadError", "A bad input: .file, .line (0: the whole file) and .field name where.", PyExc_ValueError,
      nullptr));
  m.attr("LoadError") = load_error;
  static py::object policy_error = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "colmatch.PolicyError",
      "A policy the farm cannot take (an FBSNG queue's parameters, a quota on an unknown consumable, process-type "
      "requirements); the message starts with the policy's file.",
      PyExc_ValueError, nullptr));
  m.attr("PolicyError") = policy_error;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PolicyError& e) {
      py::gil_scoped_acquire gil;
      PyErr_SetString(policy_error.ptr(), e.what());
    } catch (const loaders::LoadError& e) {
      py::gil_scoped_acquire gil;
      py::object err = load_error(e.what());
      err.attr("file") = e.file;
      err.attr("line") = e.line;
      err.attr("field") = e.field;
      PyErr_SetObject(load_error.ptr(), err.ptr());
    }
  });

  py::class_<Match, std::shared_ptr<Match>>(m, "Match")
      .def_property_readonly(
          "status",
          [](py::object self) {
            const Match& x = self.cast<const Match&>();
            return view(reinterpret_cast<const uint8_t*>(x.m.dispatch.status.data()), x.m.dispatch.status.size(), self);
          },
          "per job: 0 assigned, 1 pending, 2 rejected (uint8, input order)")
      .def_property_readonly(
          "tasker",
          [](py::object self) {
            const Match& x = self.cast<const Match&>();
            return view(x.m.dispatch.tasker.data(), x.m.dispatch.tasker.size(), self);
          },
          "per job: its tasker's index in tasker_names (the master for $fill_up), 2**32-1 if none (uint32)")
      .def_property_readonly(
          "reason",
          [](py::object self) {
            const Match& x = self.cast<const Match&>();
            return view(reinterpret_cast<const uint8_t*>(x.m.dispatch.reason.data()), x.m.dispatch.reason.size(), self);
          },
          "per job: 0 none, 1 no eligible tasker, 2 eligible but no free capacity (uint8)")
      .def_property_readonly(
          "slots",
          [](py::object self) {
            const Match& x = self.cast<const Match&>();
            return view(x.ds.jobs.slots.data(), x.ds.jobs.slots.size(), self);
          },
          "per job: the slots it asks for (uint32)")
      .def_property_readonly("job_ids", [](const Match& x) { return x.ds.jobs.id.strings(); })
      .def_property_readonly("tasker_names", [](const Match& x) { return x.ds.taskers.names; })
      .def("results_csv", [](const Match& x) { return writers::results_csv(x.ds, x.m); })
      .def("categories_csv", [](const Match& x) { return writers::categories_csv(x.ds, x.m); });

  py::class_<Simulation, std::shared_ptr<Simulation>>(m, "Simulation")
      .def_property_readonly(
          "start",
          [](py::object self) {
            const Simulation& x = self.cast<const Simulation&>();
            return view(x.r.start.data(), x.r.start.size(), self);
          },
          "per job: start time in seconds, NaN if it never started (float64)")
      .def_property_readonly(
          "end",
          [](py::object self) {
            const Simulation& x = self.cast<const Simulation&>();
            return view(x.r.end.data(), x.r.end.size(), self);
          },
          "per job: end time in seconds, NaN if it never started (float64)")
      .def_property_readonly(
          "reason",
          [](py::object self) {
            const Simulation& x = self.cast<const Simulation&>();
            return view(reinterpret_cast<const uint8_t*>(x.r.reason.data()), x.r.reason.size(), self);
          },
          "per job: why it did not start in the last cycle that considered it (SimReason, uint8; 0 started)")
      .def_property_readonly("job_ids", [](const Simulation& x) { return x.ds.jobs.id.strings(); })
      .def("schedule_csv", [](const Simulation& x) { return writers::schedule_csv(x.ds, x.r); })
      .def("timeline_csv", [](const Simulation& x) { return writers::timeline_csv(x.ds, x.r); })
      .def("cycles_csv", [](const Simulation& x) { return writers::cycles_csv(x.r); })
      .def("metrics_json", [](const Simulation& x) { return writers::simulation_metrics_json(x.ds, x.r); });

  m.def(
      "match",
      [](const std::string& format, const std::map<std::string, std::string>& args, unsigned threads) {
        auto x = std::make_shared<Match>();
        {
          const SignalChecks checks;
          py::gil_scoped_release free;
          auto limit = threads_limit(threads);
          x->ds = load(format, args, loaders::LoadMode::Snapshot, checks);
          x->m =
              run_match(x->ds.catalog, x->ds.taskers, x->ds.jobs, kernels::active(), {}, &x->ds.in_use, x->ds.dispatch);
        }
        return x;
      },
      py::arg("format"), py::arg("args"), py::arg("threads") = 0,
      "Loads `args` (the CLI's options without dashes) in `format` and matches; raises LoadError on bad input");
  m.def(
      "simulate",
      [](const std::string& format, const std::map<std::string, std::string>& args, const std::string& policy,
         double until, unsigned threads) {
        auto x = std::make_shared<Simulation>();
        {
          const SignalChecks checks;
          py::gil_scoped_release free;
          auto limit = threads_limit(threads);
          x->ds = load(format, args, loaders::LoadMode::OverTime, checks);
          SimConfig p = policy.empty() ? x->ds.policy : loaders::read_policy_toml(policy, x->ds.policy_defaults);
          p.until = until;
          x->r =
              simulate(x->ds.catalog, x->ds.taskers, x->ds.jobs, p, kernels::active(), x->ds.farm, checks.simulate());
        }
        return x;
      },
      py::arg("format"), py::arg("args"), py::arg("policy") = "",
      py::arg("until") = std::numeric_limits<double>::infinity(), py::arg("threads") = 0,
      "Loads and simulates over time with the policy file (default: the farm's [policy])");
  m.def(
      "match_memory",
      [](const py::dict& inputs, unsigned threads) {
        loaders::MemoryInputs in = memory_inputs(inputs);  // copied under the GIL
        auto x = std::make_shared<Match>();
        {
          py::gil_scoped_release free;
          auto limit = threads_limit(threads);
          x->ds = loaders::load_memory(in);
          x->m = run_match(x->ds.catalog, x->ds.taskers, x->ds.jobs, kernels::active());
        }
        return x;
      },
      py::arg("inputs"), py::arg("threads") = 0,
      "Builds the farm and jobs of colmatch.Farm (no files) and matches; raises LoadError on bad input");
  m.def(
      "simulate_memory",
      [](const py::dict& inputs, const std::string& policy, double until, unsigned threads) {
        loaders::MemoryInputs in = memory_inputs(inputs);
        auto x = std::make_shared<Simulation>();
        {
          const SignalChecks checks;
          py::gil_scoped_release free;
          auto limit = threads_limit(threads);
          x->ds = loaders::load_memory(in);
          checks();
          SimConfig p = policy.empty() ? x->ds.policy : loaders::read_policy_toml(policy, x->ds.policy_defaults);
          p.until = until;
          x->r =
              simulate(x->ds.catalog, x->ds.taskers, x->ds.jobs, p, kernels::active(), x->ds.farm, checks.simulate());
        }
        return x;
      },
      py::arg("inputs"), py::arg("policy") = "", py::arg("until") = std::numeric_limits<double>::infinity(),
      py::arg("threads") = 0, "Builds colmatch.Farm's inputs and simulates over time");
}
