#include "output/run_record.h"

#include <algorithm>

#include <omp.h>

#include "solve/energy.h"

namespace stagger {

namespace {

nlohmann::json tracks_json(const std::map<std::string, std::vector<TrackPoint>>& tracks) {
  nlohmann::json t = nlohmann::json::object();
  for (const auto& [id, points] : tracks) {
    nlohmann::json pts = nlohmann::json::array();
    for (const TrackPoint& p : points) pts.push_back({p.t, p.x.x, p.x.y, p.x.z});
    t[id] = pts;
  }
  return t;
}

}  // namespace

void RunRecord::add(const StepReport& r, bool first_step) {
  ++steps;
  converged_steps += r.converged ? 1 : 0;
  contacts_sum += r.contacts;
  contacts_max = std::max(contacts_max, r.contacts);
  islands_sum += r.islands;
  outer_sum += r.outer_iterations;
  island_solves += r.islands;
  unconverged_island_solves += r.unconverged_islands;
  inner_sum += r.inner_iterations;
  sweeps_sum += r.sweeps;
  outer_max = std::max(outer_max, r.outer_iterations_max);
  // This step's collision detection sees the overlap the previous step left (the first step sees
  // the scene's initial placement, which is the user's, not the solver's).
  if (!first_step) max_penetration = std::max(max_penetration, r.overlap_before);
  last_overlap_before = r.overlap_before;
  const StepQuality& q = r.quality;
  worst.signorini_violation = std::max(worst.signorini_violation, q.signorini_violation);
  worst.complementarity = std::max(worst.complementarity, q.complementarity);
  worst.cone_violation = std::max(worst.cone_violation, q.cone_violation);
  worst.dissipation_violation = std::max(worst.dissipation_violation, q.dissipation_violation);
  worst.natural_map_error = std::max(worst.natural_map_error, q.natural_map_error);
  last_penetration_after = q.penetration_after;
  natural_map_sum += q.natural_map_error;
}

nlohmann::json RunRecord::to_json() const {
  nlohmann::json j;
  j["steps"] = steps;
  j["converged_steps"] = converged_steps;
  j["contacts_sum"] = contacts_sum;
  j["islands_sum"] = islands_sum;
  j["contacts_max"] = contacts_max;
  j["outer_max"] = outer_max;
  j["outer_sum"] = outer_sum;
  j["island_solves"] = island_solves;
  j["unconverged_island_solves"] = unconverged_island_solves;
  j["inner_sum"] = inner_sum;
  j["sweeps_sum"] = sweeps_sum;
  j["max_penetration"] = max_penetration;
  j["last_penetration_after"] = last_penetration_after;
  j["last_overlap_before"] = last_overlap_before;
  j["worst"] = {worst.signorini_violation, worst.complementarity, worst.cone_violation, worst.dissipation_violation,
                worst.natural_map_error};
  j["natural_map_sum"] = natural_map_sum;
  j["earlier_wall_seconds"] = earlier_wall_seconds;
  j["resumed_at_step"] = resumed_at_step;
  j["tracks"] = tracks_json(tracks);
  j["frame_index"] = frame_index;
  j["frames"] = frames;
  j["frame_steps"] = frame_steps;
  return j;
}

RunRecord RunRecord::from_json(const nlohmann::json& j) {
  RunRecord r;
  j.at("steps").get_to(r.steps);
  j.at("converged_steps").get_to(r.converged_steps);
  j.at("contacts_sum").get_to(r.contacts_sum);
  j.at("islands_sum").get_to(r.islands_sum);
  j.at("contacts_max").get_to(r.contacts_max);
  j.at("outer_max").get_to(r.outer_max);
  j.at("outer_sum").get_to(r.outer_sum);
  j.at("island_solves").get_to(r.island_solves);
  j.at("unconverged_island_solves").get_to(r.unconverged_island_solves);
  j.at("inner_sum").get_to(r.inner_sum);
  r.sweeps_sum = j.value("sweeps_sum", 0LL);  // absent in checkpoints before the polish
  j.at("max_penetration").get_to(r.max_penetration);
  j.at("last_penetration_after").get_to(r.last_penetration_after);
  r.last_overlap_before = j.value("last_overlap_before", 0.0);  // absent in checkpoints before it was kept
  const nlohmann::json& w = j.at("worst");
  w.at(0).get_to(r.worst.signorini_violation);
  w.at(1).get_to(r.worst.complementarity);
  w.at(2).get_to(r.worst.cone_violation);
  w.at(3).get_to(r.worst.dissipation_violation);
  w.at(4).get_to(r.worst.natural_map_error);
  j.at("natural_map_sum").get_to(r.natural_map_sum);
  j.at("earlier_wall_seconds").get_to(r.earlier_wall_seconds);
  j.at("resumed_at_step").get_to(r.resumed_at_step);
  for (const auto& [id, pts] : j.at("tracks").items()) {
    std::vector<TrackPoint>& track = r.tracks[id];
    for (const nlohmann::json& p : pts)
      track.push_back(TrackPoint{p.at(0).get<double>(), {p.at(1).get<double>(), p.at(2).get<double>(), p.at(3).get<double>()}});
  }
  j.at("frame_index").get_to(r.frame_index);
  j.at("frames").get_to(r.frames);
  j.at("frame_steps").get_to(r.frame_steps);
  return r;
}

nlohmann::json summary_json(const World& world, const RunRecord& record, double wall, const std::string& backend,
                            const std::string& status, const std::string& failure) {
  const Scene& s = world.scene();
  const double total_wall = record.earlier_wall_seconds + wall;
  nlohmann::json j;
  j["scene"] = s.name;
  j["status"] = status;
  if (!failure.empty()) j["failure"] = failure;
  j["bodies"] = world.bodies().size();
  j["steps"] = record.steps;
  j["time_step"] = s.time_step;
  j["simulated_time"] = world.time();
  j["wall_seconds"] = total_wall;
  j["steps_per_second"] = total_wall > 0 ? double(record.steps) / total_wall : 0.0;
  if (record.resumed_at_step >= 0) j["resumed_at_step"] = record.resumed_at_step;
  j["backend"] = backend;
  j["precision"] = world.options().controls.precision == Precision::f32 ? "float" : "double";
  j["threads"] = omp_get_max_threads();
  j["method"] = method_name(s.solver.method);
  j["friction_model"] = s.solver.friction_model == FrictionModel::cone ? "cone" : "pyramid";
  j["contact_envelope"] = world.contact_envelope();
  const double n = std::max<double>(1.0, double(record.steps));
  j["contacts_mean"] = record.contacts_sum / n;
  j["contacts_max"] = record.contacts_max;
  j["islands_mean"] = record.islands_sum / n;
  const double solves = double(record.island_solves);
  j["outer_iterations_mean"] = solves > 0 ? double(record.outer_sum) / solves : 0.0;
  j["outer_iterations_max"] = record.outer_max;
  j["inner_iterations_mean"] = solves > 0 ? double(record.inner_sum) / solves : 0.0;
  // The work: every island's APGD iterations, per step. The per-solve mean above is mostly the small
  // islands' (a shaken bed's step solves its big island and a few pairs), so it hides the big one.
  j["apgd_iterations_per_step"] = double(record.inner_sum) / n;
  // The polish's Gauss-Seidel sweeps (docs/method.md): zero unless a scene raises max_outer_iterations
  // past 50 and an island stalls there.
  j["gauss_seidel_sweeps_per_step"] = double(record.sweeps_sum) / n;
  j["converged_fraction"] = record.steps ? double(record.converged_steps) / double(record.steps) : 1.0;
  // Not hidden: how many steps and island solves ended at the iteration cap (they return the best
  // iterate after the final contact projection).
  j["unconverged_steps"] = record.steps - record.converged_steps;
  j["unconverged_island_solves"] = record.unconverged_island_solves;
  // At the end: whether the state left behind (a settled pile) overlaps, not the worst impact, measured
  // on that state (the last step's collision detection saw the state before it, and its solve's
  // figure is linearized: a pile at a long step reported 0.29 mm where its bodies overlapped 0.19 mm).
  const double final_overlap = world.deepest_overlap();
  j["final_penetration"] = final_overlap;
  // The worst moment of the run, the end included; the initial placement (the scene's) is not the
  // solver's and counts only once a step has left it.
  j["max_penetration"] = std::max({record.max_penetration, record.last_penetration_after, record.steps > 0 ? final_overlap : 0.0});
  j["quality"] = {{"signorini_violation_max", record.worst.signorini_violation},
                  {"complementarity_max", record.worst.complementarity},
                  {"cone_violation_max", record.worst.cone_violation},
                  {"dissipation_violation_max", record.worst.dissipation_violation},
                  {"natural_map_error_max", record.worst.natural_map_error},
                  {"natural_map_error_mean", record.natural_map_sum / n}};
  nlohmann::json stages;
  for (int st = 0; st < kStageCount; ++st) stages[kStageNames[st]] = world.stage_seconds()[st];
  j["stage_seconds"] = stages;
  const Bodies& b = world.bodies();
  const Vec3d momentum = linear_momentum(b);
  j["final_kinetic_energy"] = kinetic_energy(b);
  j["final_potential_energy"] = potential_energy(b, s.gravity);
  j["final_momentum"] = {momentum.x, momentum.y, momentum.z};
  if (!record.tracks.empty()) j["tracks"] = tracks_json(record.tracks);
  return j;
}

}  // namespace stagger
