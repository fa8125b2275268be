// The input-format registry: every input format colmatch reads, with its command-line options and
// its loader. The CLI walks this list (options, help, validation) instead of naming formats itself,
// so a new format (Slurm, SWF, VOV, ClassAd...) is one loader file plus one line in formats.cpp.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders {

/// One command-line option of a format: `--name VALUE`.
struct FormatOption {
  std::string name;  ///< without the dashes, e.g. "machines"
  std::string help;
  bool required = true;
};

/// The option values given for a run: option name -> value (absent when not given).
using FormatArgs = std::map<std::string, std::string>;

/// An input format: its name for `--format`, a one-line description, its options, and its loader.
/// The loader receives every required option (the CLI checks first) and throws LoadError on bad
/// input, naming file, line and field.
struct InputFormat {
  std::string name;
  std::string description;
  std::vector<FormatOption> options;
  std::function<Dataset(const FormatArgs&, const ProgressFn&, LoadMode)> load;
  /// Optional: the inputs with only the job whose id is given (explain --eligibility), or nullopt when
  /// the format cannot tell it without reading everything (the caller then calls `load`).
  std::function<std::optional<Dataset>(const FormatArgs&, std::string_view id, const ProgressFn&)> load_job = {};
  /// Why `colmatch import` refuses this format ("": it saves as a native farm that matches the same):
  /// a format whose dispatch the native format cannot hold (writers::native_cannot_hold).
  std::string not_importable = {};
};

/// Every registered format, the default ("native") first.
const std::vector<InputFormat>& input_formats();

/// The format named `name`, or nullptr.
const InputFormat* find_format(const std::string& name);

/// The first option of `args` that `format` does not take ("" when none): every format takes `policy`
/// (the CLI passes its --policy to all). load_format refuses such an option (LoadError), the Python
/// module raises TypeError for it.
std::string foreign_option(const InputFormat& format, const FormatArgs& args);

/// `format`'s options as `--a, --b` (`dashes`) or `a, b`, for messages.
std::string option_list(const InputFormat& format, bool dashes = true);

/// Loads with `format`: checks that its required options are given (else throws LoadError naming
/// the option), then calls its loader.
Dataset load_format(const InputFormat& format, const FormatArgs& args, const ProgressFn& progress = {},
                    LoadMode mode = LoadMode::Snapshot);

/// The inputs with only job `id` by `format`'s load_job (the required options checked as load_format
/// does), or nullopt when the format has none or its scan does not find the job.
std::optional<Dataset> load_format_job(const InputFormat& format, const FormatArgs& args, std::string_view id,
                                       const ProgressFn& progress = {});

}  // namespace colmatch::loaders
