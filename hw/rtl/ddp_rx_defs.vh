// ddp_rx_defs.vh: the localparams and helper functions of ddp_rx and its
// stage modules (hw/rtl/ddp_rx_*.v), included inside each module.
// A module uses some of them.
/* verilator lint_off UNUSEDPARAM */

localparam KEEP_W = DATA_W / 8;               // lanes, N
localparam LG = $clog2(KEEP_W);
localparam HB = (18 + KEEP_W - 1) / KEEP_W;   // beats that hold an untagged header
localparam HBT = (14 + KEEP_W - 1) / KEEP_W;  // beats that hold a tagged one
// At W=64 a first piece's beat 0 holds header octets only (every DDP
// header is 14 or more): it is not queued for placement unless it is
// the piece's last (DROP0; see the intake).
localparam integer DROP0 = (KEEP_W < 14) ? 1 : 0;
localparam BW = $clog2(BURST);
localparam NCONN = 1 << CONN_W;
localparam RG_AW = CONN_W + 2 + RQ_AW;        // {conn, qn, slot}
localparam integer KEEP_WI = KEEP_W;
localparam [17:0] N18 = KEEP_WI[17:0];

// Per-queue state: {first MSN, count}. The buffer for MSN m is in ring
// slot m mod 2^RQ_AW, so the slot of a ULPDU's buffer comes straight from
// its header and can be read while the queue state is.
localparam Q_W = 32 + RQ_AW + 1;
// Delivery record of a ULPDU: {kind, opcode, tagged, qn, msn, len, id,
// stag, inv_stag, layer, etype, code}.
localparam RECC_W = 2 + 4 + 1 + 2 + 32 + 32 + ID_W + 32 + 32 + 4 + 4 + 8;
// Check context of a connection: {enable, pd, fail, q2, q1, q0}.
localparam CX_W = 1 + 32 + 1 + 3 * Q_W;
// Placement context of a connection, between the pieces of a ULPDU:
// {place, nxt, remain, rec, rr}.
localparam DX_W = 1 + ADDR_W + 16 + RECC_W + 224;
// STag entry: {valid, key, pd, bound, conn, access, base, len, addr}.
localparam ST_W = 1 + 8 + 32 + 1 + CONN_W + 2 + 64 + 32 + ADDR_W;
// Posted buffer: {addr, len, id}.
localparam RG_W = ADDR_W + 32 + ID_W;
// STag write generation (ddp_rx_setup): a count of s_stag writes, kept
// with each entry and with each ULPDU in pieces that places through one.
localparam GEN_W = 16;
localparam MK_W = BQ_AW + 3;                 // burst counts, modulo 2^MK_W (see b_hold)
localparam RF_W = 1 + MK_W + CONN_W + RECC_W + 224;    // {enabled, mark, conn, rec, rr}
// Header record of a piece: {drop, early, short, n, ulen, conn, first,
// octets 0..17}; n = ulen - header length, short = ulen < header length,
// drop = its beat 0 was not queued for placement (W=64, see the intake).
localparam HF_W = 1 + 1 + 1 + 16 + 16 + CONN_W + 1 + 144;
// Input beat: {data, keep, tlast, ULPDU last}.
localparam DF_W = DATA_W + KEEP_W + 2;
// Placement set-up of a piece (pl_setup): {r, m0, ylo, left, q1}.
localparam SU_W = LG + 3 + LG + 18 + 20;
// Placement descriptor of a piece: {early, conn, first, enabled, place,
// dest, s, remain, rec, set-up}.
localparam DC_W = 1 + CONN_W + 3 + ADDR_W + 5 + 16 + RECC_W + SU_W;

// Field offsets of the records above, so that a record is read by field
// name: X_F is field F's lowest bit (its highest for X_F_MSB; a one-bit
// field's only bit).
localparam REC_ERR = 0;                      // {layer, etype, code}, 16 bits
localparam REC_CPL = 16;                     // {opcode .. inv_stag}: up to REC_CPL_MSB
localparam REC_CPL_MSB = RECC_W - 3;
localparam REC_KIND_MSB = RECC_W - 1;        // 2 bits
localparam REC_TAGGED = RECC_W - 7;
localparam REC_STAG = 48;                    // 32 bits (a tagged record's STag)
localparam Q_CNT = 0;                        // RQ_AW + 1 bits
localparam CX_Q0 = 0;                        // Q_W bits each
localparam CX_Q1 = Q_W;
localparam CX_Q2 = 2 * Q_W;
localparam CX_QS_W = 3 * Q_W;                // the three queues, from CX_Q0
localparam CX_FAIL = 3 * Q_W;
localparam CX_PD = 3 * Q_W + 1;              // 32 bits
localparam CX_EN = CX_W - 1;
localparam DX_RR = 0;                        // 224 bits
localparam DX_REC = 224;
localparam DX_REMAIN = 224 + RECC_W;         // 16 bits
localparam DX_NXT = DX_REMAIN + 16;          // ADDR_W bits
localparam DX_PLACE = DX_W - 1;
localparam ST_VALID = ST_W - 1;
localparam RG_ID = 0;                        // ID_W bits
localparam RF_RR = 0;                        // 224 bits
localparam RF_REC = 224;
localparam RF_CONN = RF_REC + RECC_W;        // CONN_W bits
localparam RF_MARK = RF_CONN + CONN_W;       // MK_W bits
localparam RF_EN = RF_W - 1;
localparam HF_HDR = 0;                       // octets 0..17, 144 bits
localparam HF_FIRST = 144;
localparam HF_CONN = 145;                    // CONN_W bits
localparam HF_N = 161 + CONN_W;              // 16 bits
localparam HF_SHORT = HF_W - 3;
localparam HF_EARLY = HF_W - 2;
localparam HF_DROP = HF_W - 1;
localparam DF_ULAST = 0;
localparam DF_TLAST = 1;
localparam DF_KEEP = 2;                      // KEEP_W bits
localparam DF_DATA = 2 + KEEP_W;             // DATA_W bits
localparam DC_SU = 0;                        // SU_W bits
localparam DC_REC = SU_W;                    // RECC_W bits
localparam DC_REMAIN = SU_W + RECC_W;        // 16 bits
localparam DC_S = DC_REMAIN + 16;            // 5 bits
localparam DC_DEST = DC_S + 5;               // ADDR_W bits
localparam DC_PLACE = DC_DEST + ADDR_W;
localparam DC_EN = DC_PLACE + 1;
localparam DC_FIRST = DC_PLACE + 2;
localparam DC_CONN = DC_PLACE + 3;           // CONN_W bits
localparam DC_EARLY = DC_W - 1;

localparam [1:0] K_NONE = 2'd0, K_CPL = 2'd1, K_ERR = 2'd2, K_TERM = 2'd3;
localparam [1:0] D_DATA = 2'd0, D_FLUSH = 2'd1, D_PAD = 2'd2;

// --- helpers ----------------------------------------------------------------

// Big-endian field of 4 octets starting at octet o of the header (RFC 5041
// 4: fields are in network order, octet 0 in lane 0).
function [31:0] be32(input [18*8-1:0] h, input integer o);
    be32 = {h[8*o +: 8], h[8*(o+1) +: 8], h[8*(o+2) +: 8], h[8*(o+3) +: 8]};
endfunction

// Lanes at or above lo and below hi (0 <= lo, hi <= N).
function [KEEP_W-1:0] lane_window(input [LG:0] lo, input [LG:0] hi);
    integer b;
    begin
        for (b = 0; b < KEEP_W; b = b + 1) begin
            lane_window[b] = b >= lo && b < hi;
        end
    end
endfunction

// Octets in a tkeep that is a run from lane 0: the run's last lane b
// (lane b kept, lane b + 1 not) gives b + 1, each bit of the count an OR
// over the lanes whose b + 1 has it set (3 LUT levels at N = 64; a
// priority search from lane 0 up maps as a chain, 12).
function [LG:0] keep_count(input [KEEP_W-1:0] k);
    integer b;
    reg [KEEP_W:0] e;
    reg [LG:0] v;
    begin
        e = {1'b0, k} & ~({1'b0, k} >> 1);      // e[b]: lane b is the run's last
        keep_count = {(LG+1){1'b0}};
        for (b = 0; b < KEEP_W; b = b + 1) begin
            v = b[LG:0] + 1'b1;
            keep_count = keep_count | (v[LG:0] & {(LG+1){e[b]}});
        end
    end
endfunction

function [DATA_W-1:0] expand(input [KEEP_W-1:0] m);
    integer b;
    begin
        for (b = 0; b < KEEP_W; b = b + 1) begin
            expand[8*b +: 8] = {8{m[b]}};
        end
    end
endfunction

// gt33 (a > b) and fadd ({carry, sum} of x + y + ci) as trees.
`include "rnic_arith.vh"
/* verilator lint_off UNUSEDPARAM */
// Terminate error words ERR_* (generated from the Go model: internal/hdlcodes).
`include "rnic_codes.vh"
/* verilator lint_off UNUSEDPARAM */



// pl_setup(dlo, s, remain): what placement needs of a piece whose first
// payload octet goes to a host address with low bits dlo, at octet s of
// the piece, with remain payload octets to the end of the ULPDU. Octet g
// of the piece is output octet g + r, r = (dlo - s) mod N; the payload's
// output octets run from gs = s + r (gs = dlo mod N) to end = gs + remain
// - 1. Fields: r; m0 = gs / N, the output beat of the first payload octet;
// ylo = end mod N, the last payload octet's lane; left = (dlo + remain +
// N - 1) / N, the output beats the payload takes; q1 = m1 - 2, m1 = end /
// N the output beat of the last payload octet (-1 for no payload), as a
// 20-bit two's complement count. gs is at most 31 + N - 1, so m0 at most
// 4. The two sums are fadd trees; q1 = (remain + gs - 1 - 2N) >> LG,
// arithmetic, in one sum.
function [SU_W-1:0] pl_setup(input [LG-1:0] dlo, input [4:0] s, input [15:0] remain);
    reg [7:0] s8;
    reg [9:0] gs;
    reg [LG-1:0] r, ylo;
    reg [19:0] yq, q1;
    // (Only some bits of the sums are wanted.)
    /* verilator lint_off UNUSEDSIGNAL */
    reg [32:0] sl, sq;
    /* verilator lint_on UNUSEDSIGNAL */
    begin
        s8 = {3'd0, s};
        r = dlo - s8[LG-1:0];
        gs = {2'd0, s8} + {{(10-LG){1'b0}}, r};
        ylo = dlo + remain[LG-1:0] - 1'b1;
        sl = fadd({16'd0, remain}, {{(32-LG-1){1'b0}}, 1'b0, dlo} + KEEP_WI - 1, 1'b0);
        yq = {10'd0, gs} - 20'd1 - {1'b0, N18[17-1:0], 1'b0};
        sq = fadd({16'd0, remain}, {12'd0, yq}, 1'b0);
        q1 = sq[19:0] >> LG;
        q1 = q1 | ~({20{1'b1}} >> LG) & {20{sq[19]}};
        if (remain == 16'd0) begin
            q1 = 20'hffffd;          // m1 = -1
        end
        pl_setup = {r, gs[LG +: 3], ylo, sl[LG +: 18], q1};
    end
endfunction

// Queue qn of a check context.
function [Q_W-1:0] cx_q(input [3*Q_W-1:0] cx, input [1:0] qn);
    case (qn)
        2'd1: cx_q = cx[CX_Q1 +: Q_W];
        2'd2: cx_q = cx[CX_Q2 +: Q_W];
        default: cx_q = cx[CX_Q0 +: Q_W];
    endcase
endfunction

localparam [Q_W-1:0] Q_INIT = {32'd1, {(RQ_AW+1){1'b0}}};


// Lanes of output beat m that are in the window [m0*N + lo, m1*N + hi],
// from flags of q0 = m0 - m and q1 = m1 - m: q0 = 0, q0 > 0, q1 = 0,
// q1 < 0; lo_m = lanes >= lo, hi_m = lanes <= hi.
function [KEEP_W-1:0] win_flags(input q0z, input q0p, input q1z, input q1n, input [KEEP_W-1:0] lo_m,
                                input [KEEP_W-1:0] hi_m);
    begin
        if (q0p || q1n) begin
            win_flags = {KEEP_W{1'b0}};
        end else begin
            win_flags = (q0z ? lo_m : {KEEP_W{1'b1}}) & (q1z ? hi_m : {KEEP_W{1'b1}});
        end
    end
endfunction

// Whether win_mask(q0, q1, lo_m, hi_m) has a lane, from q0, q1 and
// lhne = |(lo_m & hi_m) (fixed for a piece: dest's lane <= ylo), not
// from a 64-input OR of the mask.
function win_ne(input [19:0] q0, input [19:0] q1, input lhne);
    win_ne = !(!q0[19] && q0 != 20'd0) && !q1[19] && (q0 != 20'd0 || q1 != 20'd0 || lhne);
endfunction

// The same from q0 and q1 themselves (20-bit two's complement).
function [KEEP_W-1:0] win_mask(input [19:0] q0, input [19:0] q1, input [KEEP_W-1:0] lo_m,
                               input [KEEP_W-1:0] hi_m);
    win_mask = win_flags(q0 == 20'd0, !q0[19] && q0 != 20'd0, q1 == 20'd0, q1[19], lo_m, hi_m);
endfunction

/* verilator lint_on UNUSEDPARAM */
