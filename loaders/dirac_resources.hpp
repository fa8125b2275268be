// DIRAC's resource tree (Sites -> CEs -> Queues) between reading and building, internal to the dirac
// loader: its JSON form is read in loaders/dirac.cpp, its CFG form (the configuration service's own text,
// the `Resources` section) in loaders/dirac_cfg.cpp; both give the same queues.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace colmatch::loaders::dirac {

/// A parameter value of the resource tree: a number, a string, or a list of strings.
struct Param {
  bool number = false, list = false;
  double num = 0;
  std::string text;
  std::vector<std::string> items;
};
using Params = std::map<std::string, Param>;

/// One queue with every parameter it has: its site's, overridden by its CE's, overridden by its own.
struct Queue {
  std::string site, ce, queue;
  Params params;
};

/// Whether the file holds CFG text (its first character that is not a blank or in a `#` comment line is
/// not `{`). Throws LoadError when it cannot be read.
bool is_cfg_text(const std::string& path);

/// Reads the CFG text of a resource tree (DIRAC's diraccfg, `CFG.loadFromBuffer`): `Name {` ... `}`
/// sections (the name may stand on the line before its brace), `key = value` options (a later one
/// replaces an earlier one), `key += value` appends ", value" to a declared option, `#` comment lines,
/// a section opened twice is one section. The tree is `Sites` (or `Resources` / `Sites`), each site
/// either directly under it or under a grid section (DIRAC's `Sites/LCG/LCG.CERN.ch`), with `CEs` /
/// `<ce>` / `Queues` / `<queue>`. A value with commas is a list (DIRAC's List.fromChar: items trimmed,
/// empty ones dropped); one that is a whole finite number is a number; others are strings.
/// Throws LoadError naming file, line and the section path for unbalanced braces, a `+=` on an
/// undeclared option, an empty or `/`-holding name, text that is neither an option nor a section name,
/// sections nested deeper than 64, or no `Sites` section.
std::vector<Queue> read_resources_cfg(const std::string& path);

}  // namespace colmatch::loaders::dirac
