// rx_join: joins a ULPDU's first pieces until they hold its DDP/RDMAP
// header, between mpa_rx and ddp_rx, for many connections, DATA_W bits per
// clock.
//
// mpa_rx cuts each ULPDU (DDP segment) into pieces at TCP segment
// boundaries; ddp_rx needs the first piece of every ULPDU to hold at least
// min(H, ULPDU_Length) octets, so that the header is never split
// (hw/README.md, "MPA receive path and the interface to placement"): H =
// 46 for an RDMA Read Request (18-octet untagged DDP header, RFC 5041 4.3,
// and its 28-octet RDMAP body, RFC 5040 4.4) and a Terminate, H = 14 for
// a tagged message (the tagged DDP header, RFC 5041 4.2) and H = 18 for
// every other untagged one (the untagged DDP header).
// rx_join makes it so: a first piece that is shorter and does not end its
// ULPDU is held, per connection, and put in front of that connection's
// next piece (pieces of one connection come in stream order); if the two
// are still short and do not end the ULPDU they are held again.
//
// Streams (AXI4-Stream, the formats of hw/README.md on both sides):
//   s_axis, m_axis: ULPDU pieces, one frame each, lane-0 aligned, tkeep
//     all ones but in the last beat (a run from lane 0, possibly empty);
//     tuser = {ulpdu_len[15:0], conn, first, last}: ulpdu_len, conn and
//     first the same on every beat of a piece (ulpdu_len valid when
//     first), last valid on the tlast beat (where mpa_rx drives it and
//     ddp_rx reads it; 0 on the output's other beats). A joined piece is
//     the held octets followed by the new piece's, with first = 1, the
//     held piece's ulpdu_len, and the new piece's last. A piece that needs
//     no join passes with its octets unchanged; one whose octets all left
//     before its tlast beat came in ends with an empty beat (tkeep 0).
//   s_verdict, m_verdict: tdata = MPA code[2:0], tuser = conn; one per
//     ULPDU, strictly after the clock of its last piece's tlast beat on
//     s_axis (hw/README.md; mpa_rx keeps to it). They pass in order with the
//     pieces: a verdict goes out only after its own last piece (tuser
//     last) has left m_axis, never in the clock of that piece's tlast
//     beat (hw/README.md's rule holds on m_axis); one a clock (see
//     "verdicts").
//   clr_valid, clr_ready, clr_conn: clears connection clr_conn's held
//     octets (drive it when the connection is (re)configured); takes
//     effect for pieces of that connection that arrive after it. Do not
//     clear a connection while one of its pieces is inside the block.
//
// Structure (every register's inputs at most 4 LUT levels deep at
// DATA_W = 512, `make synth`):
//   A    the input register. The connection's held state is read from its
//        sdp_ram in the clock the beat arrives (every clock, for the beat
//        at s_axis), used in the clock after (a write at that edge is
//        caught in ws_*), and copied, with the writes since, for the
//        clocks the beat waits (held_reg): no RAM control hangs on the
//        handshake.
//   G    the gather register: a ring of GD output beats (8 at W = 64, 4
//        at 128 and 256, 2 at 512), each with its tuser. A piece starts
//        behind the entries of the pieces before it while G has room (it
//        need not wait for them to leave). Each beat taken from A is
//        rotated by r, the held octets' count mod N (0 but in a join, so
//        a lane-to-lane copy), merged below lane r with the previous
//        beat's spill (prev_reg), and written to G; a last beat that
//        spills past lane N-1 takes one more entry. m_axis is G's entry at its read index: valid when it
//        belongs to an earlier piece, or once the piece's header is
//        complete (dec_reg); never for a held piece.
//   A piece with held octets takes a set-up clock first, which clears
//   them in the RAM: a join, once G is empty, loads them into G (whole
//   beats as entries from entry 0, the partial one as prev_reg) and sets
//   r; a first piece just drops them. A piece that ends short of its
//   header (and of its ULPDU) is held: one clock more writes its first 45
//   octets in G, with the count, the octets still missing and ulpdu_len,
//   to the RAM, and takes its entries out of G. Octets missing are
//   counted down per beat (rem_reg), so the decision is one 7-bit compare
//   a beat.
//
// Latency, from the clock a piece's first beat is taken to the clock its
// first output beat can be: 2 (1 more for a piece with held octets), and
// for a first piece, 1 from the clock the beat that brings min(H,
// ulpdu_len) octets or its end is taken (A's beat goes out with the
// next one's look-ahead: at DATA_W = 64, 2 for an RDMA Write, 3 for a
// Send, 6 for a Read Request; at 512, 2).
// Throughput: 1 beat a clock within a piece and from piece to piece, with
// always-ready outputs, gathered first pieces (W < 512) included: their
// beats wait in G while the next pieces come in behind them. A set-up
// (and for a join the wait for G to empty before it), a spilled last beat
// and a hold each cost a clock.
//
// Verification: tests/rx_join/test_rx_join.py (random piece streams,
// reassembled per connection on both sides), tests/rnic_rx (end to end).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rx_join #(
    parameter DATA_W = 64,
    parameter CONN_W = 10
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [DATA_W-1:0]       s_axis_tdata,
    input  wire [DATA_W/8-1:0]     s_axis_tkeep,
    input  wire                    s_axis_tvalid,
    output wire                    s_axis_tready,
    input  wire                    s_axis_tlast,
    input  wire [CONN_W+17:0]      s_axis_tuser,

    output wire [DATA_W-1:0]       m_axis_tdata,
    output wire [DATA_W/8-1:0]     m_axis_tkeep,
    output wire                    m_axis_tvalid,
    input  wire                    m_axis_tready,
    output wire                    m_axis_tlast,
    output wire [CONN_W+17:0]      m_axis_tuser,

    input  wire [2:0]              s_verdict_tdata,
    input  wire                    s_verdict_tvalid,
    output wire                    s_verdict_tready,
    input  wire [CONN_W-1:0]       s_verdict_tuser,

    output wire [2:0]              m_verdict_tdata,
    output wire                    m_verdict_tvalid,
    input  wire                    m_verdict_tready,
    output wire [CONN_W-1:0]       m_verdict_tuser,

    input  wire                    clr_valid,
    output wire                    clr_ready,
    input  wire [CONN_W-1:0]       clr_conn
);

localparam N = DATA_W / 8;                  // lanes
localparam LG = $clog2(N);
localparam HOLD = 45;                       // octets held at most: one short of a header
// G: output beats in the gather register, a power of two above the beats a
// header can take (46 octets, and held octets rotated in front of them).
localparam GD = (N == 8) ? 8 : (N == 64) ? 2 : 4;
localparam GA = $clog2(GD);
localparam PADW = GD * DATA_W;              // G's data, as one vector
localparam HW = 1 + 6 + 6 + 16 + 8 * HOLD;  // held state: {valid, rem, count, ulpdu_len, octets}
localparam [6:0] HDR = 7'd46;               // the longest DDP/RDMAP header (RFC 5040 4.4)
localparam [6:0] HDR18 = 7'd18;             // the DDP header, untagged (RFC 5041 4.3)
localparam [6:0] HDR14 = 7'd14;             // tagged (4.2)
localparam integer NI = N;
localparam [LG:0] NC = NI[LG:0];            // a whole beat's count

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rx_join: DATA_W must be 64, 128, 256 or 512, not %0d", DATA_W);
        $finish;
    end
    if (CONN_W < 1 || CONN_W > 16) begin
        $error("rx_join: CONN_W must be 1..16, not %0d", CONN_W);
        $finish;
    end
end

// Octets in a tkeep that is a run from lane 0: its top lane, one-hot
// (k & ~(k >> 1)), encoded as top + 1, each count bit an OR of lanes (a
// flat OR tree, where a priority chain would be N levels deep).
function [LG:0] keep_count(input [N-1:0] k);
    integer b, c;
    reg [N-1:0] top;
    reg [LG+1:0] v;
    begin
        top = k & ~(k >> 1);
        keep_count = 0;
        for (b = 0; b < N; b = b + 1) begin
            v = b[LG+1:0] + 1'b1;
            for (c = 0; c <= LG; c = c + 1) begin
                keep_count[c] = keep_count[c] | (top[b] & v[c]);
            end
        end
    end
endfunction

// ---- input register A ----------------------------------------------------------------

reg              in_sof_reg;                // the next s_axis beat starts a piece
reg              a_valid_reg;
reg [DATA_W-1:0] a_data_reg;
reg [LG:0]       a_cnt_reg;                 // its octets
reg              a_tlast_reg;
reg [CONN_W-1:0] a_conn_reg;
reg              a_first_reg;
reg              a_plast_reg;               // tuser last (on the tlast beat)
reg [15:0]       a_ulen_reg;
reg [6:0]        a_hdr_reg;                 // min(header, ulpdu_len)

wire [15:0] s_ulen = s_axis_tuser[CONN_W+17:CONN_W+2];
// The header a first piece must hold (hw/README.md): 46 octets for an
// untagged Read Request or Terminate (RDMAP opcode 1 or 7 in octet 1, RFC
// 5040 4.4 and its Terminate header: ddp_rx reads their octets 18..45), 14
// for a tagged one (T, octet 0 bit 7: ddp_rx reads its 14 header octets),
// 18 for every other untagged one (ddp_rx reads their 18), and 46 when the
// first beat does not hold both control octets (an empty or one-octet
// beat).
wire [3:0]  s_op = s_axis_tdata[11:8];
wire [6:0]  s_hdr = !s_axis_tkeep[1] ? HDR : s_axis_tdata[7] ? HDR14 : (s_op != 4'd1 && s_op != 4'd7) ? HDR18 : HDR;
wire [CONN_W-1:0] s_conn = s_axis_tuser[CONN_W+1:2];

wire take;                                  // the beat in A goes into G
assign s_axis_tready = !a_valid_reg || take;
wire s_go = s_axis_tvalid && s_axis_tready;

// ---- held state per connection ---------------------------------------------------------

// The RAM is read every clock for the beat at s_axis (conn is the same on
// every beat of a piece); the word is used in the clock after the beat is
// taken (a_fresh), and copied for the clocks it waits in A.
// The valid bit, which s_axis_tready waits on through take, has a table
// of its own in LUT RAM, read into a flip-flop: from a block RAM's late
// output that was the block's longest path (hw/timing.md).
wire          rd_en = 1'b1;
wire [HW-1:0] rd_data;
wire          wr_en;
wire [CONN_W-1:0] wr_addr;
wire [HW-1:0] wr_data;

sdp_ram #(.WIDTH(HW-1), .ADDR_W(CONN_W)) held_ram (
    .clk(clk),
    .wr_en(wr_en), .wr_addr(wr_addr), .wr_data(wr_data[HW-2:0]),
    .rd_en(rd_en), .rd_addr(s_conn), .rd_data(rd_data[HW-2:0])
);

sdp_ram #(.WIDTH(1), .ADDR_W(CONN_W), .LUTRAM(1)) held_valid_ram (
    .clk(clk),
    .wr_en(wr_en), .wr_addr(wr_addr), .wr_data(wr_data[HW-1]),
    .rd_en(rd_en), .rd_addr(s_conn), .rd_data(rd_data[HW-1])
);

// The RAM returns the word as it was at the read; a write to the same
// connection at the read's edge is kept in ws_*, and the word for the beat
// in A, with the writes to its connection since, in held_reg.
reg          a_fresh_reg;                   // A's beat was taken at the last edge
reg          ws_hit_reg;
reg [HW-1:0] ws_data_reg;
reg [HW-1:0] held_reg;

wire [HW-1:0] held = !a_fresh_reg ? held_reg : ws_hit_reg ? ws_data_reg : rd_data;
wire          h_valid = held[HW-1];
wire [5:0]    h_rem = held[HW-2:HW-7];     // octets still short of the header
wire [5:0]    h_cnt = held[HW-8:HW-13];
wire [15:0]   h_ulen = held[HW-14:HW-29];
wire [PADW-1:0] h_pad = {{(PADW-8*HOLD){1'b0}}, held[8*HOLD-1:0]};
wire [11:0]   h_qw = {6'd0, h_cnt} >> LG;
wire [GA:0]   h_q = h_qw[GA:0];             // whole beats held (h_cnt div N)
wire unused_q = &{1'b0, h_qw[11:GA+1]};
wire [LG-1:0] h_r = h_cnt[LG-1:0];          // octets of the partial beat (h_cnt mod N)

// ---- G: the gather register ------------------------------------------------------------
// Output beats, in a ring written at g_w and read at g_r (GA+1 bit
// indices), each with its tuser: the piece in progress from g_base on, and
// before it old_n entries of pieces that have ended (and may go out).

localparam UF = CONN_W + 17;                // an entry's {ulpdu_len, conn, first}

reg [PADW-1:0]   g_data_reg;
reg [GD*(LG+1)-1:0] g_cnt_reg;
reg [GD*UF-1:0]  g_user_reg;
reg [GD-1:0]     g_last_reg;                // the piece's tlast beat
reg [GD-1:0]     g_ulast_reg;               // ... and it ends the ULPDU (tuser last)
reg [GA:0]       g_w_reg, g_r_reg;
reg [GA:0]       g_n_reg;                   // entries in G
reg [GA:0]       g_base_reg;                // the piece in progress's first entry
reg [GA:0]       old_n_reg;                 // entries before it

wire g_empty = g_n_reg == 0;
wire g_one = g_n_reg == 1;
wire g_full = g_n_reg[GA];

// The piece in progress (its first beat taken, or its held octets loaded).
// g_base_reg and old_n_reg keep their values after a piece ends until the
// next starts: old_n only counts down, and a piece that ended unheld has
// dec_reg set, so its entries go out; a held piece's entries never go out
// (dec_reg stays 0), so g_base and old_n still describe it at the commit.
// A hold writes 45 octets from g_base on: past the held count they may be
// a later entry's (W = 128, 256), never read back.
reg              pin_reg;
reg              dec_reg;                   // its beats may go out (header complete)
reg              flush_reg;                 // a last beat spilled: one more G entry
reg              hold_reg;                  // ... and the piece is held
reg              commit_reg;                // write the held state, then free G
reg [LG:0]       fcnt_reg;                  // the spilled octets
reg [5:0]        rem_reg;                   // octets still short of the header
reg [6:0]        tot_reg;                   // octets so far (while under 46)
reg [LG-1:0]     r_reg;                     // rotation: held octets mod N (0 but in a join)
reg [N-1:0]      mask_reg;                  // lanes below r_reg
reg [DATA_W-1:0] prev_reg;                  // the last beat rotated: its lanes below r_reg are next
reg [CONN_W-1:0] p_conn_reg;
reg [15:0]       p_ulen_reg;
reg              p_first_reg;
reg              p_plast_reg;

// ---- output: G's entry at g_r ----------------------------------------------------------

wire [GA-1:0] rsel = g_r_reg[GA-1:0];
wire [LG:0]   o_cnt = g_cnt_reg[rsel*(LG+1) +: LG+1];
wire          o_last = g_last_reg[rsel];
wire          o_ulast = g_ulast_reg[rsel];
reg [N-1:0]   o_keep;
integer i;
always @* begin
    for (i = 0; i < N; i = i + 1) begin
        o_keep[i] = i < o_cnt;
    end
end

assign m_axis_tdata = g_data_reg[rsel*DATA_W +: DATA_W];
assign m_axis_tkeep = o_keep;
assign m_axis_tvalid = !g_empty && (old_n_reg != 0 || dec_reg);
assign m_axis_tlast = o_last;
assign m_axis_tuser = {g_user_reg[rsel*UF +: UF], o_ulast};
wire pop = m_axis_tvalid && m_axis_tready;

// ---- the beat in A ---------------------------------------------------------------------

// A piece starts behind the ones before it in G while there is room. A
// piece with held octets first takes a set-up clock, which clears them in
// the RAM: a join, once G is empty (or its one entry leaves in this
// clock), loads them into G from entry 0; a first piece drops them.
wire start_ok = g_empty || (pop && g_one);
wire st_cand = a_valid_reg && !pin_reg && !commit_reg;
wire setup = st_cand && h_valid && (a_first_reg || start_ok);
wire jn_go = setup && !a_first_reg;
wire take_st = st_cand && !h_valid && !g_full;
wire take_ct = a_valid_reg && pin_reg && !flush_reg && !g_full;
assign take = take_st || take_ct;
wire do_flush = flush_reg && !g_full;

wire [6:0] rem_e = pin_reg ? {1'b0, rem_reg} : (a_first_reg ? a_hdr_reg : 7'd0);
wire [6:0] tot_e = pin_reg ? tot_reg : 7'd0;
wire [UF-1:0] e_user = pin_reg ? {p_ulen_reg, p_conn_reg, p_first_reg} : {a_ulen_reg, a_conn_reg, a_first_reg};
wire [LG:0] cnt_e = a_tlast_reg ? a_cnt_reg : NC;
wire [7:0] cnt8 = {{(7-LG){1'b0}}, cnt_e};
wire [6:0] cnt7 = cnt8[6:0];
wire unused_cnt = cnt8[7];
wire dec_now = (pin_reg && dec_reg) || cnt7 >= rem_e || (a_tlast_reg && a_plast_reg);
wire hold_now = a_tlast_reg && !dec_now;
// Look ahead (N < 46, where a header can take more than one beat): when
// A's beat is not the piece's last, the piece's next beat is at s_axis and
// is taken at the same edge as A's (s_axis_tready is 1 whenever take is).
// If that beat completes the header (its octets, counted by the tkeep bit
// of the last lane the header needs: tkeep is a run from lane 0, all ones
// but on the tlast beat) or ends the ULPDU, the piece may go out a clock
// early: dec_reg is set with A's beat, and dec_now holds for the next.
localparam AHEAD = N < 46;
localparam [7:0] N8 = NI[7:0];
// the lane of the next beat that holds the header's last octet, octet
// rem_e - 1 - N of it: rem_e - 1 mod N
wire [LG-1:0] ahead_lane = rem_e[LG-1:0] - 1'b1;
wire ahead_in = {1'b0, rem_e} > N8 && {1'b0, rem_e} <= 2 * N8 && s_axis_tkeep[ahead_lane];
wire ahead = AHEAD && s_axis_tvalid && !a_tlast_reg && (ahead_in || (s_axis_tlast && s_axis_tuser[0]));

// The beat rotated by r (lane j to lane j + r mod N), behind the octets
// of the previous one.
reg [DATA_W-1:0] rot;
reg [DATA_W-1:0] ob;
reg [LG-1:0] src;
integer l;
always @* begin
    for (l = 0; l < N; l = l + 1) begin
        src = l[LG-1:0] - r_reg;
        rot[8*l +: 8] = a_data_reg[8*src +: 8];
        ob[8*l +: 8] = (mask_reg[l] || flush_reg) ? prev_reg[8*l +: 8] : rot[8*l +: 8];
    end
end
wire [LG+1:0] sum = {2'b0, r_reg} + {1'b0, a_cnt_reg};
wire spill = a_tlast_reg && sum[LG] && sum[LG-1:0] != 0;
wire [LG:0] ob_cnt = (!a_tlast_reg || sum[LG]) ? NC : sum[LG:0];

// ---- held state writes -----------------------------------------------------------------

reg              clr_pend_reg;
reg [CONN_W-1:0] clr_conn_reg;
assign clr_ready = !clr_pend_reg;

// A hold's octets: G's entries from the piece's first on.
reg [PADW-1:0] g_from_base;
reg [GA-1:0] gi;
integer m;
always @* begin
    for (m = 0; m < GD; m = m + 1) begin
        gi = g_base_reg[GA-1:0] + m[GA-1:0];   // mod GD
        g_from_base[m*DATA_W +: DATA_W] = g_data_reg[gi*DATA_W +: DATA_W];
    end
end
wire unused_fb = &{1'b0, g_from_base[PADW-1:8*HOLD]};
wire [HW-1:0] hold_word = {1'b1, rem_reg, tot_reg[5:0], p_ulen_reg, g_from_base[8*HOLD-1:0]};
assign wr_en = commit_reg || setup || clr_pend_reg;
assign wr_addr = commit_reg ? p_conn_reg : setup ? a_conn_reg : clr_conn_reg;
assign wr_data = commit_reg ? hold_word : {HW{1'b0}};
wire clr_go = clr_pend_reg && !commit_reg && !setup;
wire w_to_a = setup || (commit_reg && p_conn_reg == a_conn_reg) || (clr_go && clr_conn_reg == a_conn_reg);
// A write at the edge where s_axis's beat is taken (never a set-up: A is
// full then, and does not take it).
wire w_to_s = (commit_reg && p_conn_reg == s_conn) || (clr_pend_reg && !commit_reg && clr_conn_reg == s_conn);
wire unused_tot = tot_reg[6];

// ---- verdicts: in order with the last pieces ----------------------------------------------
// Verdicts come one per ULPDU, in the order of the last pieces, so the one
// at the head may go once one more last piece has left m_axis than
// verdicts have left m_verdict. ahead_reg counts the last pieces gone out
// ahead of their verdicts, each last piece the clock after its tlast beat
// (gone_last_reg, which keeps pop's depth off the count) and each verdict
// the clock after it went (gone_v_reg, which keeps m_verdict_tready's off
// it: the handshake only loads gone_v_reg and the two places, as before
// the count). The count is ahead_reg - gone_v_reg; none_reg and one_reg
// say ahead_reg is 0 or 1, so the head may go unless none_reg, or
// one_reg with gone_v_reg: m_verdict_tvalid is one LUT of registers, and
// a verdict goes two clocks after its tlast beat at the earliest.
// ahead_reg is 10 bits: mpa_rx holds at most 32 ULPDUs' verdicts back and
// ddp_rx takes at most its 2^REC_AW <= 256 delivery records' worth of
// last pieces ahead of theirs.
// Two places hold them: the head (v_*) and a second place behind it (u_*),
// which takes a verdict while the head waits; the head takes the next one
// on the clock it goes out (u_*'s, or s_verdict's when u_* is empty), so
// one goes through a clock and s_verdict_tready is a register.
reg              gone_last_reg;             // a last piece's tlast beat left m_axis
reg              gone_v_reg;                // a verdict left m_verdict
reg [9:0]        ahead_reg;
reg              none_reg;                  // ahead_reg == 0
reg              one_reg;                   // ahead_reg == 1
reg              v_valid_reg;
reg [2:0]        v_code_reg;
reg [CONN_W-1:0] v_conn_reg;
reg              u_valid_reg;
reg [2:0]        u_code_reg;
reg [CONN_W-1:0] u_conn_reg;

assign s_verdict_tready = !u_valid_reg;
assign m_verdict_tvalid = v_valid_reg && !none_reg && !(one_reg && gone_v_reg);
assign m_verdict_tdata = v_code_reg;
assign m_verdict_tuser = v_conn_reg;
wire v_go = m_verdict_tvalid && m_verdict_tready;

integer j;
always @(posedge clk) begin
    // input register
    if (s_go) begin
        in_sof_reg <= s_axis_tlast;
        a_valid_reg <= 1'b1;
        a_data_reg <= s_axis_tdata;
        a_cnt_reg <= keep_count(s_axis_tkeep);
        a_tlast_reg <= s_axis_tlast;
        a_first_reg <= s_axis_tuser[1];
        a_plast_reg <= s_axis_tuser[0];
        if (in_sof_reg) begin
            a_conn_reg <= s_conn;
            a_ulen_reg <= s_ulen;
            a_hdr_reg <= s_ulen < {9'd0, s_hdr} ? s_ulen[6:0] : s_hdr;
        end
    end else if (take) begin
        a_valid_reg <= 1'b0;
    end

    // bypass of the held-state RAM
    a_fresh_reg <= s_go;
    ws_hit_reg <= w_to_s;
    ws_data_reg <= wr_data;
    held_reg <= w_to_a ? wr_data : held;

    // G and the piece
    if (pop) begin
        g_r_reg <= g_r_reg + 1'b1;
        if (old_n_reg != 0) begin
            old_n_reg <= old_n_reg - 1'b1;
        end
    end
    g_n_reg <= g_n_reg + {{GA{1'b0}}, take || do_flush} - {{GA{1'b0}}, pop};
    if (take || do_flush) begin
        for (j = 0; j < GD; j = j + 1) begin
            if (g_w_reg[GA-1:0] == j[GA-1:0]) begin
                g_data_reg[j*DATA_W +: DATA_W] <= ob;
                g_cnt_reg[j*(LG+1) +: LG+1] <= flush_reg ? fcnt_reg : ob_cnt;
                g_user_reg[j*UF +: UF] <= e_user;
                g_last_reg[j] <= flush_reg || (a_tlast_reg && !spill);
                g_ulast_reg[j] <= flush_reg ? p_plast_reg : a_tlast_reg && !spill && a_plast_reg;
            end
        end
        g_w_reg <= g_w_reg + 1'b1;
    end
    if (take) begin
        if (!pin_reg) begin
            g_base_reg <= g_w_reg;
            old_n_reg <= g_n_reg - {{GA{1'b0}}, pop};
            p_conn_reg <= a_conn_reg;
            p_ulen_reg <= a_ulen_reg;
            p_first_reg <= a_first_reg;
        end
        dec_reg <= dec_now || ahead;
        rem_reg <= rem_e[5:0] - cnt7[5:0];
        tot_reg <= tot_e + cnt7;
        prev_reg <= rot;
        pin_reg <= 1'b1;
        if (a_tlast_reg) begin
            p_plast_reg <= a_plast_reg;
            hold_reg <= hold_now;
            fcnt_reg <= {1'b0, sum[LG-1:0]};
            if (spill) begin
                flush_reg <= 1'b1;
            end else begin
                pin_reg <= 1'b0;
                commit_reg <= hold_now;
                r_reg <= {LG{1'b0}};
                mask_reg <= {N{1'b0}};
            end
        end
    end
    if (do_flush) begin
        flush_reg <= 1'b0;
        pin_reg <= 1'b0;
        commit_reg <= hold_reg;
        r_reg <= {LG{1'b0}};
        mask_reg <= {N{1'b0}};
    end
    if (jn_go) begin
        g_data_reg <= h_pad;
        for (j = 0; j < GD; j = j + 1) begin
            g_cnt_reg[j*(LG+1) +: LG+1] <= NC;
            g_user_reg[j*UF +: UF] <= {h_ulen, a_conn_reg, 1'b1};
        end
        g_last_reg <= {GD{1'b0}};
        g_ulast_reg <= {GD{1'b0}};
        g_w_reg <= h_q;
        g_r_reg <= {(GA+1){1'b0}};
        g_n_reg <= h_q;
        g_base_reg <= {(GA+1){1'b0}};
        old_n_reg <= {(GA+1){1'b0}};
        prev_reg <= h_pad[h_q[GA-1:0]*DATA_W +: DATA_W];
        r_reg <= h_r;
        for (j = 0; j < N; j = j + 1) begin
            mask_reg[j] <= j < h_r;
        end
        rem_reg <= h_rem;
        tot_reg <= {1'b0, h_cnt};
        dec_reg <= 1'b0;
        p_conn_reg <= a_conn_reg;
        p_ulen_reg <= h_ulen;
        p_first_reg <= 1'b1;
        pin_reg <= 1'b1;
    end
    if (commit_reg) begin
        // the held piece's entries leave G; those before it stay
        commit_reg <= 1'b0;
        g_w_reg <= g_base_reg;
        g_n_reg <= old_n_reg - {{GA{1'b0}}, pop};
    end

    // clears
    if (clr_valid && clr_ready) begin
        clr_pend_reg <= 1'b1;
        clr_conn_reg <= clr_conn;
    end else if (clr_go) begin
        clr_pend_reg <= 1'b0;
    end

    // verdicts
    gone_last_reg <= pop && o_ulast;
    gone_v_reg <= v_go;
    if (gone_last_reg && !gone_v_reg) begin
        ahead_reg <= ahead_reg + 10'd1;
        none_reg <= 1'b0;
        one_reg <= none_reg;
    end else if (gone_v_reg && !gone_last_reg) begin
        ahead_reg <= ahead_reg - 10'd1;
        none_reg <= one_reg;
        one_reg <= ahead_reg == 10'd2;
    end
    if (v_go || !v_valid_reg) begin
        // The head is free after this clock: the waiting verdict moves up
        // (none is taken then: s_verdict_tready is low), or one comes in.
        v_valid_reg <= u_valid_reg || s_verdict_tvalid;
        v_code_reg <= u_valid_reg ? u_code_reg : s_verdict_tdata;
        v_conn_reg <= u_valid_reg ? u_conn_reg : s_verdict_tuser;
        u_valid_reg <= 1'b0;
    end else if (s_verdict_tvalid && s_verdict_tready) begin
        u_valid_reg <= 1'b1;
        u_code_reg <= s_verdict_tdata;
        u_conn_reg <= s_verdict_tuser;
    end

    if (rst) begin
        in_sof_reg <= 1'b1;
        a_valid_reg <= 1'b0;
        a_fresh_reg <= 1'b0;
        ws_hit_reg <= 1'b0;
        held_reg <= {HW{1'b0}};
        g_w_reg <= {(GA+1){1'b0}};
        g_r_reg <= {(GA+1){1'b0}};
        g_n_reg <= {(GA+1){1'b0}};
        g_base_reg <= {(GA+1){1'b0}};
        old_n_reg <= {(GA+1){1'b0}};
        pin_reg <= 1'b0;
        dec_reg <= 1'b0;
        flush_reg <= 1'b0;
        commit_reg <= 1'b0;
        r_reg <= {LG{1'b0}};
        mask_reg <= {N{1'b0}};
        clr_pend_reg <= 1'b0;
        gone_last_reg <= 1'b0;
        gone_v_reg <= 1'b0;
        ahead_reg <= 10'd0;
        none_reg <= 1'b1;
        one_reg <= 1'b0;
        v_valid_reg <= 1'b0;
        u_valid_reg <= 1'b0;
    end
end

endmodule

`resetall
