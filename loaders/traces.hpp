// Importers for public cluster traces (../shared/datasets/raw, SOURCES.md there).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "loaders/dataset.hpp"
#include "loaders/line_reader.hpp"

namespace colmatch::loaders {

/// Google cluster-data 2011 (clusterdata-2011-2; Reiss, Wilkes, Hellerstein 2011).
///  Taskers: machines ADDed (event 0) and not REMOVEd (event 1) at time `at_us`, with UPDATEs (2) applied;
///  consumables `cpu` and `memory` (normalized capacities), string attribute `platform`; effective
///  power = CPU capacity. Events after `at_us` are ignored. A missing capacity field leaves the
///  consumable undefined on that machine (an UPDATE with an empty field keeps the old value).
///  Jobs: one per task (`JOBID.TASKINDEX`) that has a SUBMIT (event 0) in task_events, in order of first
///  SUBMIT, with the fields of its last SUBMIT: priority, submit time (seconds), user as owner,
///  scheduling class as group (`class<N>`), cpu and memory requests as consumable amounts (an empty
///  request field, which the schema marks optional, means no request). Disk requests are read but not
///  matched: machine_events carries no disk capacity. The anti-affinity flag is not modelled.
///  `at_us` defaults to the last timestamp of the task events read.
///  LoadMode::OverTime (`simulate`): every machine up at some time by `at_us` is a tasker, and
///  Dataset::farm says when: rows ADDed at time 0 are up at the start, later ADDs are Up events,
///  REMOVEs Down events, capacity UPDATEs Configure events (the columns hold each row's largest
///  capacity); a machine whose platform changes, or that gains a capacity it had no value for, goes
///  on as a new row named `ID#2`, `ID#3`... Machine events must then be in time order.
/// Throws LoadError naming file, line and field on malformed rows.
Dataset load_google2011(const std::string& machine_events, const std::string& task_events,
                        std::optional<int64_t> at_us = std::nullopt, const ProgressFn& progress = {},
                        LoadMode mode = LoadMode::Snapshot);

/// Alibaba OpenB GPU cluster trace 2023 (Weng et al., USENIX ATC 2023).
///  Taskers: node list rows `sn,cpu_milli,memory_mib,gpu,model`: consumables cpu_milli, memory_mib,
///  gpu_milli (= gpu x 1000), int attribute gpu (device count), string attribute gpu_model (absent on
///  CPU-only nodes); effective power = cpu_milli.
///  Jobs: pod rows `name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,pod_phase,creation_time,...]`:
///  consumables cpu_milli, memory_mib and gpu_milli (num_gpu x gpu_milli, charged per job); a GPU pod
///  requests gpu >= num_gpu; gpu_spec `A|B` becomes `gpu_model == {A, B}` (empty = no constraint);
///  submit = creation_time. GPU sharing is modelled in aggregate (a node's GPU milli-units as one pool),
///  not per device.
Dataset load_openb(const std::string& nodes, const std::string& pods, const ProgressFn& progress = {});

}  // namespace colmatch::loaders
