# Sourced by the match scripts (thesis-ordering.sh, ablation.sh, thesis-engine-match.sh), so that
# their games are played and adjudicated the same way and their results compare.
#
#   uho_match OUT ANCHOR EVENT SEED ROUNDS ARENA_ARGS...
#
# Plays `arena tournament ARENA_ARGS...` (the engines, --gauntlet, the time control and any extra
# flag) from UHO openings in random order (SEED), ROUNDS game pairs per pairing, 2 games at a time,
# resigning at 1000 cp, drawing at 10 cp, at most 200 moves, into OUT/games.pgn (started afresh),
# then rates the games with ANCHOR at 0 (OUT/tournament.txt, OUT/ratings.md). Run from the
# repository root after building arena.
uho_match() {
    local out="$1" anchor="$2" event="$3" seed="$4" rounds="$5"
    shift 5
    mkdir -p "$out"
    rm -f "$out/games.pgn"
    target/release/arena tournament "$@" \
        --openings ../shared/data/uho_4060_v2.epd --openings-order random --seed "$seed" \
        --rounds "$rounds" --concurrency 2 \
        --resign-score 1000 --draw-score 10 --maxmoves 200 \
        --event "$event" --pgn "$out/games.pgn" | tee "$out/tournament.txt"
    target/release/arena elo "$out/games.pgn" --anchor "$anchor" --markdown | tee "$out/ratings.md"
}
