// What `stagger run` accumulates over its steps: the totals behind summary.json, the tracked
// bodies' trajectories and the frame index. It travels in checkpoints (as JSON: doubles round-trip
// exactly), so a resumed run reports the whole run.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "step/world.h"

namespace stagger {

struct TrackPoint {
  double t;
  Vec3d x;
};

struct RunRecord {
  std::int64_t steps = 0, converged_steps = 0;
  double contacts_sum = 0, islands_sum = 0;
  int contacts_max = 0, outer_max = 0;
  long long outer_sum = 0, island_solves = 0, unconverged_island_solves = 0, inner_sum = 0, sweeps_sum = 0;
  double max_penetration = 0;
  double last_penetration_after = 0;  // linearized overlap left by the last step
  double last_overlap_before = 0;     // deepest overlap the last step's collision detection found
  StepQuality worst;
  double natural_map_sum = 0;
  double earlier_wall_seconds = 0;    // wall time of the segments before a resume
  std::int64_t resumed_at_step = -1;  // the last resume's step, or -1
  std::map<std::string, std::vector<TrackPoint>> tracks;
  std::string frame_index = "step,time,file\n";
  int frames = 0;
  std::vector<std::int64_t> frame_steps;  // the steps of the VTK frames written (the .pvd collections)

  // `first_step`: the run's first step, whose overlap is the scene's initial placement.
  void add(const StepReport& report, bool first_step);

  nlohmann::json to_json() const;
  static RunRecord from_json(const nlohmann::json& j);  // throws nlohmann::json::exception
};

// summary.json (SCENE_FORMAT.md, Outputs) for the run so far; `wall` is this segment's seconds.
nlohmann::json summary_json(const World& world, const RunRecord& record, double wall, const std::string& backend,
                            const std::string& status, const std::string& failure);

}  // namespace stagger
