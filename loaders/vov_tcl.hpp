// The Tcl subset Altair Accelerator (VOV) sites write their taskers.tcl and resources.tcl in (issue 10):
//   vtk_tasker_define HOST [-resources "LIST"] [-CPUS N] [-power P] [-name NAME]
//   vtk_tasker_set_defaults [-resources "LIST"] [-CPUS N] [-power P]   (for the taskers defined after)
//   vtk_resourcemap_set NAME COUNT [-map "EXPR"]   and   vtk_resourcemap_set NAME -total N [-map "EXPR"]
//   vovresourcemgr set NAME [-max N] [-map "EXPR"]
//   set VAR VALUE,  foreach VAR {literal list} { commands },  $VAR and ${VAR} in quoted and bare words
//   (an unknown variable is an error, as in Tcl: VOV's own $ resources are written \$NAME or in braces),
//   # comments, a backslash at the end of a line continues it, `;` separates commands.
// Words: {braced} (literal), "quoted" (with $ substitution), bare. Anything else (another command,
// [command substitution], an unknown option, a missing value) is an error naming file, line and the
// command. No general Tcl: this reads files, it runs nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace colmatch::loaders {

/// One tasker (vtk_tasker_define), with the defaults in force where it was defined.
struct VovTaskerDef {
  std::string host;       ///< the host it runs on
  std::string name;       ///< -name, else the host
  std::string resources;  ///< its resource list (VOV notation, engine/model/vov.hpp)
  uint32_t cpus = 1;      ///< -CPUS: the slots it offers (CPUS/N)
  double power = 1;       ///< -power: its effective power
  size_t line = 0;
};

/// One resource map (vtk_resourcemap_set or vovresourcemgr set).
struct VovMapDef {
  std::string name;
  std::optional<uint64_t> count;   ///< units farm-wide
  std::optional<std::string> map;  ///< the expression it maps to
  size_t line = 0;
};

/// What a taskers.tcl / resources.tcl file defines (both kinds may be in either file).
struct VovTclFile {
  std::vector<VovTaskerDef> taskers;
  std::vector<VovMapDef> maps;
};

/// Reads `path` (plain or gzip). Throws LoadError naming the file, the line and the command (field).
/// Bounded: foreach nests at most 8 deep, a file expands to at most 10^6 commands (each pass of a
/// foreach counts, whatever its body), a variable's value is at most 65,536 bytes, its variables at most
/// 64 MiB in all, the definitions it makes at most 64 MiB.
VovTclFile read_vov_tcl(const std::string& path);

/// The same from text in memory; errors name `source`.
VovTclFile parse_vov_tcl(const std::string& text, const std::string& source);

}  // namespace colmatch::loaders
