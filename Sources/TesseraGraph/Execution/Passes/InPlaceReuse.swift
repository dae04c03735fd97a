/// Picks the inputs a fused program may write its result over.
///
/// A fused step's leaf is a candidate when it is a temporary that dies at this step and has
/// the result's scalar type and shape. Whether it is used is decided when the plan runs: the
/// value must be compact and its storage shared by nothing else (no view still holds it).
/// Writes `inPlaceCandidates`.
enum InPlaceReuse {
    static func run(_ state: inout PlanningState) {
        let entries = state.entries
        let lastUse = state.lastUse
        let isTemporary = state.isTemporary
        let programs = state.tables.programs
        state.inPlaceCandidates = state.steps.enumerated().map { s, step in
            guard case .fused(let entry, let program) = step else { return [] }
            return programs[program].leaves.filter { r in
                lastUse[r] == s && isTemporary[r] && entries[r].type == entries[entry].type
                    && entries[r].shape == entries[entry].shape
            }
        }
    }
}
