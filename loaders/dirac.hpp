// DIRAC job requirements (seed 003, JobRequirements RFC #7): a resource tree Sites -> CEs -> Queues whose
// queues inherit their CE's and site's parameters, and JDL job descriptions with a Requirements section.
#pragma once

#include <string>

#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders {

/// Loads a DIRAC farm.
///
/// `resources` is JSON: {"Sites": {"<site>": {<param>: <value>, ..., "CEs": {"<ce>": {<param>: ...,
/// "Queues": {"<queue>": {<param>: ...}}}}}}}. Each queue is a tasker named `<site>/<ce>/<queue>` with
/// the attributes Site, CE and Queue, and every parameter of its site, overridden by its CE's,
/// overridden by its own (RFC: queues inherit from CEs and sites and may override them). A parameter
/// whose values are all numbers becomes a double attribute; one given as a list anywhere is a set-valued
/// string attribute (e.g. SoftwareTag); others are strings.
///
/// `jdl` holds one or more job descriptions `[ Name = value; ... ]`. Recognized: JobID (else JobName,
/// else the job's position), Owner, OwnerGroup, Priority, NumberOfProcessors (slots), and the
/// requirement keywords Site, BannedSite, Platform, CPUTime, plus a `Requirements = [ ... ]` section
/// with arbitrary parameters. Each requirement becomes a clause (RFC matching rules): a list value
/// matches any of its values, a number is a capacity the queue must reach (`>=`), a string must be
/// equal; BannedSite excludes sites; a parameter the queue lacks makes it ineligible. A parameter
/// appearing only in jobs still gets an attribute, so that no queue offers it.
/// Malformed JDL syntax or JSON throws LoadError naming file, line and field; a requirement of the wrong
/// type for its attribute rejects that job with the reason.
Dataset load_dirac(const std::string& resources, const std::string& jdl, const ProgressFn& progress = {});

}  // namespace colmatch::loaders
