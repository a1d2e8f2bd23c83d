// The islands an APGD loop is still iterating, and their blocks and bodies, as index lists, so that
// late iterations launch over what is left instead of over everything with most of it masked off
// (one hard island among thousands that have finished; on a GPU a launch over every block and body
// costs as much early as late). Built from an island mask with the executor's loops and scans, so the
// CPU twin runs the GPU's compaction.
//
// A list may still hold islands that finished after it was built: every loop over it still checks
// its island's mask, so a stale entry costs a skipped element and changes nothing. The results are
// therefore the same bit for bit with lists or without (SolveControls::compact_active; a test checks).
#pragma once

#include "solve/contact_block.h"

namespace stagger {

template <class Exec>
struct ActiveLists {
  template <class U>
  using Array = typename Exec::template Array<U>;

  Array<int> islands, blocks, bodies;                 // the listed indices
  Array<int> island_position, block_start, body_start;  // per island: where its entries go (exclusive scans)
  Array<int> contacts;                                  // per island: its contacts if listed (for the total)
  int num_islands = 0, num_blocks = 0, num_bodies = 0;
  long long num_contacts = 0;  // in the listed islands: the work of a loop over their blocks
  bool listed = false;  // false: the loops run over every island, block and body (no lists)
  long long builds = 0;  // how many times lists were built (tests check the lists are used)

  // The list pointers for the executor's loops: nullptr means "all".
  const int* island_list() { return listed ? Exec::ptr(islands) : nullptr; }
  const int* block_list() { return listed ? Exec::ptr(blocks) : nullptr; }
  const int* body_list() { return listed ? Exec::ptr(bodies) : nullptr; }

  void reset() { listed = false; }

  // After exec.count(active, ni) returned `left` (> 0; on the GPU the check's one round trip): lists again when the islands left are at most half of those
  // listed (so a loop rebuilds O(log islands) times, not at every check), none while all iterate.
  void update(Exec& exec, int left, const int* active, int ni, const ContactBlock* block_of, int nb,
              const int* island_block_begin, const int* island_contact_begin, int ns, const int* body_island,
              const int* island_body_begin) {
    if (left == ni) {
      listed = false;
      return;
    }
    if (listed && 2 * left > num_islands) return;
    if (int(islands.size()) < ni) {
      Exec::fill(island_position, ni, 0);
      Exec::fill(islands, ni, 0);
      Exec::fill(block_start, ni, 0);
      Exec::fill(body_start, ni, 0);
      Exec::fill(contacts, ni, 0);
    }
    if (int(blocks.size()) < nb) Exec::fill(blocks, nb, 0);
    if (int(bodies.size()) < ns) Exec::fill(bodies, ns, 0);
    int* position = Exec::ptr(island_position);
    exec.for_each(ni, [=] STAGGER_HD(int i) { position[i] = active[i] ? 1 : 0; });
    // The list's length is the scan's total, not `left`: the positions written below are the scan's.
    const int listed_islands = int(exec.exclusive_scan(position, ni, position));
    int *island = Exec::ptr(islands), *block_at = Exec::ptr(block_start), *body_at = Exec::ptr(body_start);
    int* contact_count = Exec::ptr(contacts);
    exec.for_each(ni, [=] STAGGER_HD(int i) {
      const bool on = active[i] != 0;
      if (on) island[position[i]] = i;
      block_at[i] = on ? island_block_begin[i + 1] - island_block_begin[i] : 0;
      body_at[i] = on ? island_body_begin[i + 1] - island_body_begin[i] : 0;
      contact_count[i] = on ? island_contact_begin[i + 1] - island_contact_begin[i] : 0;
    });
    num_islands = listed_islands;
    num_blocks = int(exec.exclusive_scan(block_at, ni, block_at));
    num_bodies = int(exec.exclusive_scan(body_at, ni, body_at));
    num_contacts = exec.exclusive_scan(contact_count, ni, contact_count);
    int *block = Exec::ptr(blocks), *body = Exec::ptr(bodies);
    // An island's blocks and bodies are contiguous, and keep their order in the lists.
    exec.for_each(nb, [=] STAGGER_HD(int b) {
      const int i = block_of[b].island;
      if (active[i]) block[block_at[i] + b - island_block_begin[i]] = b;
    });
    exec.for_each(ns, [=] STAGGER_HD(int s) {
      const int i = body_island[s];
      if (active[i]) body[body_at[i] + s - island_body_begin[i]] = s;
    });
    listed = true;
    ++builds;
  }
};

}  // namespace stagger
