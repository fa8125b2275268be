// What an Altair Accelerator site configures around its files (the policy's `[policy.vov]` table, read by
// loaders/policy.hpp; used by the reader, loaders/vov.hpp): `$` resources, tool wrappers, tasker symbols.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/model/vov.hpp"

namespace colmatch::loaders {

/// What a site configures around the files (the policy's `[policy.vov]` table, loaders/policy.hpp):
struct VovOptions {
  /// `$NAME` in a job's list is replaced by this list (seed 000: "expands any special resource").
  std::map<std::string, std::string, std::less<>> dollars;
  /// The wrappers a job's tool is found after (vov::tool_of).
  std::vector<std::string> wrappers = vov::default_wrappers();
  /// `@NAME@` in a tasker's list is replaced by this list (`OS`, `MACHINE`, `STD`, site symbols). Built
  /// in: `@HOST@` (the tasker's host name as a resource), `@CPUS@` (`CPUS/<-CPUS>`), and `@STD@`
  /// unless defined here: `@HOST@ @CPUS@`, then `@OS@` and `@MACHINE@` when those are defined.
  std::map<std::string, std::string, std::less<>> symbols;
  /// The resources the farm's distinct job lists may expand to in all (through the maps; each held until
  /// compiled, a few hundred bytes: 2^22 is under 2 GB). Lists past it, in the file's order, are rejected
  /// naming the bound; a list that still fits after one that did not is kept.
  size_t max_expanded_resources = size_t{1} << 22;
};

}  // namespace colmatch::loaders
