// mpa_rx_ooo: out-of-order delineation for the MPA receive path (RFC 5044
// 6, cases 2 and 3; appendix A.3). Sits on mpa_rx's exception stream and
// passes it on unchanged; from every segment there that came out of order
// (reason 3) on a connection with markers, it finds the FPDUs wholly
// inside the segment through the segment's own markers and hands their
// ULPDUs on, validated, for early placement (m_early). The segment still
// goes out on the exception stream: its octets are the in-order stream's
// once the hole before it closes, and the host (TCP reassembly) gives them
// back to mpa_rx then, which delineates and verifies them again and
// delivers. Delivery is never early; only placement is.
//
// What is found is what iwarp/mpa's OOOReceiver places early from the same
// segment when it holds nothing else out of order (tests/mpa_rx_ooo checks
// it FPDU for FPDU):
//   - every marker whose four octets are in the segment points (FPDUPTR,
//     RFC 5044 4.2, low two bits ignored; 0 = the FPDU right behind the
//     marker) to a candidate ULPDU_Length field;
//   - a candidate is tried when it, and its leading marker if one sits in
//     front of it, lies in the segment, it is not itself a marker position,
//     and it lies past every FPDU already found and every candidate already
//     tried (candidates are taken in marker order);
//   - the FPDU there is found when all of it, from its leading marker to
//     its CRC, is in the segment, its CRC is good (CRCs on), every marker
//     inside it points back to its ULPDU_Length field (the leading one
//     with FPDUPTR 0), and no marker behind its end points to it (the
//     marker that found it lies inside it, RFC 5044 6 case 2);
//   - the FPDU right behind a found one is tried next (case 3), then the
//     candidates of the markers behind it.
// Where a segment's markers disagree with each other (a corrupted or
// hostile stream), the OOOReceiver tries candidates in stream order, the
// block in marker order with the rules above, and they may find different
// subsets; the in-order check that follows is the same either way. The
// block does not know how far the in-order stream has got: the
// OOOReceiver also refuses a candidate inside the FPDU its in-order chain
// is reading, which with markers that agree never lies inside a segment
// beyond that chain.
//
// Interfaces.
// cfg_*: as mpa_rx's (cfg_en is not needed here); written at once,
// cfg_ready is always high. Configure a connection while none of its
// segments is in the block.
// s_exc_* / m_exc_*: mpa_rx's exception stream, tuser = {conn, seq[31:0],
// len[15:0], reason[2:0]}; passed through beat for beat (combinationally).
// A segment to delineate (reason 3, len 1..SEG_OCTETS-DATA_W/8) that finds
// the block free waits 2 clocks at its first beat (the connection's
// settings are read) and then passes through while it is copied into the
// segment buffer. One that comes while the block is still searching the
// one before passes on at once, not searched: the exception stream, and so
// mpa_rx's intake behind it, is never held up by a search. Other segments
// pass at any time.
// m_skip_*: a one-clock pulse (no ready) for each reason-3 segment passed
// on without a search: conn, seq, reason 1 (the block was busy with
// another segment) or 2 (longer than the buffer). Its FPDUs are placed
// when the in-order stream reaches them, as without this block.
// busy: a segment is being searched or ULPDUs found are still to go out.
// m_early_*: one frame per FPDU found, its ULPDU lane-0 aligned, tkeep a
// run from lane 0 (the last beat may be empty: the frame format of
// mpa_rx's pieces), tuser = {seq[31:0] of its ULPDU_Length field,
// ulpdu_len[15:0], conn}; FPDUs of one segment come in stream order.
//
// How. The segment is written into a buffer (sdp_ram, 2^SEG_AW beats)
// stream-aligned, octet s of the stream in lane s mod N (see mpa_rx_align),
// so that markers are word 0 of their beat and FPDUs start on words. The
// markers are then read, one a clock, into a table of candidates (see
// "the candidates"), and tried one after another (see "candidate
// selection"). Each candidate FPDU is walked a beat a clock through an
// mpa_rx_lane (CRC32c and ULPDU packing) into an output buffer that keeps
// the frame only if its verdict is good. The walk is set up from the
// FPDU's header over four clocks, works out each beat's figures a beat
// ahead and hands the lane a registered command (see "the walk through
// one FPDU"); the marker checks that make an FPDU bad are made beside the
// lane. One candidate at a time: about 17 clocks per FPDU plus one per
// beat, the segment's beats once more to copy it, and about ten clocks
// per segment for its figures and the marker pipeline. Latency is not a
// goal here; placement of the in-order stream is the fast path, and the
// clocks buy shallow logic: every sum is an fadd (one clock) or a
// two-clock sum72a/sum72b, every comparison of positions a gt33
// (rnic_arith.vh), and the block maps in at most 5 LUT levels.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mpa_rx_ooo #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter SEG_OCTETS = 16384      // segment buffer; longest segment taken: SEG_OCTETS - DATA_W/8
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire                    cfg_valid,
    output wire                    cfg_ready,
    input  wire [CONN_W-1:0]       cfg_conn,
    input  wire                    cfg_mrk_en,
    input  wire                    cfg_crc_en,
    input  wire [31:0]             cfg_base,

    input  wire [DATA_W-1:0]       s_exc_tdata,
    input  wire [DATA_W/8-1:0]     s_exc_tkeep,
    input  wire                    s_exc_tvalid,
    output wire                    s_exc_tready,
    input  wire                    s_exc_tlast,
    input  wire [CONN_W+50:0]      s_exc_tuser,

    output wire [DATA_W-1:0]       m_exc_tdata,
    output wire [DATA_W/8-1:0]     m_exc_tkeep,
    output wire                    m_exc_tvalid,
    input  wire                    m_exc_tready,
    output wire                    m_exc_tlast,
    output wire [CONN_W+50:0]      m_exc_tuser,

    output reg  [DATA_W-1:0]       m_early_tdata,
    output reg  [DATA_W/8-1:0]     m_early_tkeep,
    output reg                     m_early_tvalid,
    input  wire                    m_early_tready,
    output reg                     m_early_tlast,
    output reg  [CONN_W+47:0]      m_early_tuser,

    output reg                     m_skip_valid,
    output reg  [CONN_W-1:0]       m_skip_conn,
    output reg  [31:0]             m_skip_seq,
    output reg  [1:0]              m_skip_reason,

    output wire                    busy
);

localparam N = DATA_W / 8;
localparam LN = $clog2(N);
localparam WORDS = DATA_W / 32;
localparam WL = $clog2(WORDS) + 1;
localparam OL = LN + 1;
localparam SEG_AW = $clog2(SEG_OCTETS) - LN;
localparam PW = 17;                              // a position in the buffer (< SEG_OCTETS + N), with room above
localparam K = SEG_OCTETS / 512 + 1;             // markers a segment can hold
localparam KW = $clog2(K + 1);
localparam integer SEG_MAX_I = SEG_OCTETS - N;
localparam [15:0] SEG_MAX = SEG_MAX_I[15:0];
localparam [2:0] EXC_OUT_OF_ORDER = 3'd3;
localparam OUT_W = DATA_W + N + 1 + 32 + 16 + CONN_W;
localparam [WL-1:0] WORDS_W = WORDS[WL-1:0];

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("mpa_rx_ooo: DATA_W must be 64, 128, 256 or 512, not %0d", DATA_W);
        $finish;
    end
    if (SEG_OCTETS < 1024 || SEG_OCTETS > 32768 || (SEG_OCTETS & (SEG_OCTETS - 1)) != 0) begin
        $error("mpa_rx_ooo: SEG_OCTETS must be a power of two in 1024..32768, not %0d", SEG_OCTETS);
        $finish;
    end
end

// ---- per-connection settings ---------------------------------------------------------
// {markers, CRCs, base mod 512}

assign cfg_ready = 1'b1;

wire [CONN_W-1:0] x_conn = s_exc_tuser[CONN_W+50:51];
wire [31:0]       x_seq = s_exc_tuser[50:19];
wire [15:0]       x_len = s_exc_tuser[18:3];
wire [2:0]        x_reason = s_exc_tuser[2:0];

localparam [3:0] S_IDLE = 4'd0, S_LOOK = 4'd1, S_CAP = 4'd2, S_FLUSH = 4'd3, S_DISC = 4'd4,
                 S_SEL = 4'd5, S_HDR = 4'd6, S_HDR2 = 4'd7, S_WALK = 4'd8, S_VWAIT = 4'd9,
                 S_HDR3 = 4'd10, S_HDR4 = 4'd11, S_PREP = 4'd12;
reg [3:0] state_reg;

reg exc_mid_reg;           // inside an exception frame: the next beat is not a first beat
wire x_ooo = x_reason == EXC_OUT_OF_ORDER && x_len != 16'd0;
wire x_cap = x_ooo && x_len <= SEG_MAX;
wire x_first_cap = !exc_mid_reg && x_cap;
// Searching the segment before: this one passes on without a search.
wire scanning = state_reg != S_IDLE && state_reg != S_LOOK && state_reg != S_CAP;
wire look = state_reg == S_IDLE && s_exc_tvalid && x_first_cap;

wire [10:0] set_rd;
sdp_ram #(.WIDTH(11), .ADDR_W(CONN_W)) set_ram (
    .clk(clk),
    .wr_en(cfg_valid), .wr_addr(cfg_conn), .wr_data({cfg_mrk_en, cfg_crc_en, cfg_base[8:0]}),
    .rd_en(look), .rd_addr(x_conn), .rd_data(set_rd)
);

// ---- the exception stream, passed through ----------------------------------------------

wire x_open = exc_mid_reg || !x_cap || state_reg == S_CAP || scanning;
assign m_exc_tdata = s_exc_tdata;
assign m_exc_tkeep = s_exc_tkeep;
assign m_exc_tlast = s_exc_tlast;
assign m_exc_tuser = s_exc_tuser;
assign m_exc_tvalid = s_exc_tvalid && x_open;
assign s_exc_tready = m_exc_tready && x_open;
wire x_go = s_exc_tvalid && s_exc_tready;

// ---- the segment being delineated ------------------------------------------------------

`include "rnic_arith.vh"

localparam PWW = PW - 2;                         // a buffer position in words

reg              cap_en_reg;     // copy it (markers on)
reg              crc_en_reg;
reg [CONN_W-1:0] conn_reg;
reg [31:0]       seq_reg;
reg [LN-1:0]     a_reg;          // lane of its first octet: (seq - base) mod N
reg [8:0]        mb_reg;         // stream offset of buffer position 0, mod 512
reg [15:0]       len_reg;        // its length
reg [DATA_W-1:0] prev_reg;       // the previous input beat
reg [SEG_AW:0]   wr_beat_reg;
reg [1:0]        prep_n_reg;     // S_PREP: clocks left

// Stream alignment: beat k of the buffer is input beats k-1 and k, shifted
// up by a lanes.
wire [2*DATA_W-1:0] dbl_in = {s_exc_tdata, prev_reg};
wire [2*DATA_W-1:0] dbl_fl = {{DATA_W{1'b0}}, prev_reg};
wire [OL-1:0]       a_up = {1'b1, {LN{1'b0}}} - {1'b0, a_reg};
wire [DATA_W-1:0]   al_in = dbl_in[{a_up, 3'b000} +: DATA_W];
wire [DATA_W-1:0]   al_fl = dbl_fl[{a_up, 3'b000} +: DATA_W];

// The last input beat leaves octets for one more buffer beat when
// a + (len mod N, or N) > N.
wire [OL-1:0] len_tail = (x_len[LN-1:0] == {LN{1'b0}}) ? {1'b1, {LN{1'b0}}} : {1'b0, x_len[LN-1:0]};
reg           extra_reg;
// While the segment is copied its beats come at the input's pace (the
// stream passes through in S_CAP whatever the segment's tuser says).
wire          cap_go = s_exc_tvalid && m_exc_tready;

wire             seg_wr = (state_reg == S_CAP && cap_en_reg && cap_go) || state_reg == S_FLUSH;
wire [DATA_W-1:0] seg_wd = state_reg == S_FLUSH ? al_fl : al_in;
reg              seg_re;
reg [SEG_AW-1:0] seg_ra;
wire [DATA_W-1:0] seg_rd;

sdp_ram #(.WIDTH(DATA_W), .ADDR_W(SEG_AW)) seg_ram (
    .clk(clk),
    .wr_en(seg_wr), .wr_addr(wr_beat_reg[SEG_AW-1:0]), .wr_data(seg_wd),
    .rd_en(seg_re), .rd_addr(seg_ra), .rd_data(seg_rd)
);

// Figures of the segment, worked out a sum a clock from its length and
// lane (stable from its first beat on; S_PREP waits for them): e, the
// buffer position past its last octet; e - 1; e - 1 - N; e - 8 (the
// furthest a candidate's ULPDU_Length field may lie: the shortest FPDU,
// header, pad and CRC, takes 8 octets); e - 4 - p0, from which the number
// of markers whose four octets are in it; its base, seq - a. Each is one
// fadd (4 LUT levels) or a two-clock sum.
reg [PW-1:0]  e_reg;
reg [PW-1:0]  el_reg;            // e - 1: its last octet
reg [PW:0]    lim_reg;           // e - 4 - p0, signed
reg [KW-1:0]  mk_cnt_reg;        // markers in the segment
reg [PWW:0]   w8_reg;            // floor((e - 8) / 4), signed: a candidate's word is at most this
reg [WL-1:0]  aw_reg;            // its first whole word, ceil(a / 4)
reg [6:0]     m0w_reg;           // marker positions mod 512, in words
reg [161:0]   bs_sa_reg;
reg [31:0]    base_reg;          // seq - a: the stream's sequence number at buffer position 0

// Marker positions: stream offset mod 512 == 0, i.e. buffer position p with
// (mb + p) mod 512 == 0.
function is_mk;
    input [8:0] mb;
    input [PW-1:0] p;
    reg [8:0] sum;
    reg unused;
    begin
        unused = &{1'b0, p[PW-1:9]};
        sum = mb + p[8:0];
        is_mk = sum == 9'd0;
    end
endfunction

// ---- the candidates: one per marker -------------------------------------------------------
// A marker at buffer position p (words P) with FPDUPTR q (words Q) points
// to the ULPDU_Length field at t = p - q (RFC 5044 4.2), or at p + 4 for
// q = 0, the FPDU right behind it. Read one a clock, and worked out over
// four clocks into the tables: D1 has the marker on seg_rd and sums U = P
// - Q - 1 and T = P - Q; D2 picks them (q = 0: T = P + 1, U = P) and
// checks t against the marker positions; D3 the bounds; D4 writes. What
// does not change while candidates are tried is worked out here: whether
// a leading marker sits at t - 4 (then the FPDU starts there), the FPDU's
// first position, and whether the candidate may be tried at all (it lies
// at or after position 0, is not itself a marker position, leaves room
// for the shortest FPDU before e, and its first octet is in the segment).

reg [PW-1:0]  p0_reg;            // the first marker position at or after a
reg [PW-1:0]  mk_pos_reg;        // next marker to read
reg [KW-1:0]  mk_n_reg;          // markers read
reg [PWW-1:0] t_tab [0:K-1];     // its candidate's position, in words
reg [PWW-1:0] f_tab [0:K-1];     // the candidate FPDU's first position, in words
reg [PWW-1:0] m_tab [0:K-1];     // the marker's position, in words
reg [K-1:0]   v_tab;             // the candidate lies at or after position 0
reg [K-1:0]   s_tab;             // ... and may be tried
reg [K-1:0]   l_tab;             // ... and has a leading marker

wire disc_more = state_reg == S_DISC && mk_n_reg != mk_cnt_reg;

reg           d1_valid_reg, d2_valid_reg, d3_valid_reg, d4_valid_reg;
reg [KW-1:0]  d1_idx_reg, d2_idx_reg, d3_idx_reg, d4_idx_reg;
reg [PWW-1:0] d1_p_reg, d2_p_reg, d3_p_reg, d4_p_reg;
reg           d2_z_reg;                      // FPDUPTR 0
reg [PWW:0]   d2_u_reg, d2_t_reg;            // U and T, signed
reg [PWW-1:0] d3_t_reg, d3_f_reg, d4_t_reg, d4_f_reg;
reg           d3_ok_reg, d3_onmk_reg, d3_lead_reg;
reg           d4_ok_reg, d4_st_reg, d4_lead_reg;

// D1: P + ~Q (+ 1) within PWW + 1 bits, the sign on top.
wire [13:0]   d1_q = {seg_rd[23:16], seg_rd[31:26]};
wire [31:0]   d1_x = {{(32-PWW){1'b0}}, d1_p_reg};
wire [31:0]   d1_y = {{(31-PWW){1'b0}}, ~{{(PWW-13){1'b0}}, d1_q}};
wire [32:0]   d1_u = fadd(d1_x, d1_y, 1'b0);
wire [32:0]   d1_t = fadd(d1_x, d1_y, 1'b1);
// D2: pick; a leading marker at t - 4 (t >= 4).
wire [PWW-1:0] d2_tw = d2_z_reg ? (d2_p_reg | {{(PWW-1){1'b0}}, 1'b1}) : d2_t_reg[PWW-1:0];
wire [PWW-1:0] d2_uw = d2_z_reg ? d2_p_reg : d2_u_reg[PWW-1:0];
wire          d2_lead = d2_z_reg || (!d2_u_reg[PWW] && d2_u_reg[6:0] == m0w_reg);
// D3: the bounds.
wire          d3_fits = !w8_reg[PWW] && !gt33({{(33-PWW){1'b0}}, d3_t_reg}, {{(33-PWW){1'b0}}, w8_reg[PWW-1:0]});
wire          d3_fge = !gt33({{(33-WL){1'b0}}, aw_reg}, {{(33-PWW){1'b0}}, d3_f_reg});

// ---- candidate selection ----------------------------------------------------------------
// Candidates are tried in marker order, over three clocks: R reads the
// tables, G checks the candidate against what was tried and found before
// (it lies past the last one tried and its FPDU past the last one found),
// and a candidate that passes is taken a clock later; the two behind it
// are dropped and read again after its walk, against the new bounds.

reg [KW-1:0]  sel_i_reg;         // next to read
reg           r_valid_reg, r_st_reg, r_lead_reg;
reg [KW-1:0]  r_i_reg;
reg [PWW-1:0] r_t_reg, r_f_reg;
reg           g_go_reg, g_lead_reg;
reg [KW-1:0]  g_i_reg;
reg [PWW-1:0] g_t_reg, g_f_reg;
reg [PWW-1:0] fl_reg;            // the last candidate tried
reg           fl_any_reg;
reg [PWW-1:0] cov_reg;           // past the last FPDU found, in words
reg [PW-1:0]  s_reg;             // the candidate being tried: its ULPDU_Length
reg [PW-1:0]  from_reg;          // its first octet (its leading marker, if any)
reg           lead_reg;

wire r_go = r_valid_reg && r_st_reg &&
            (!fl_any_reg || gt33({{(33-PWW){1'b0}}, r_t_reg}, {{(33-PWW){1'b0}}, fl_reg})) &&
            !gt33({{(33-PWW){1'b0}}, cov_reg}, {{(33-PWW){1'b0}}, r_f_reg});
wire sel_end = sel_i_reg == mk_n_reg && !r_valid_reg && !g_go_reg;

// ---- the walk through one FPDU --------------------------------------------------------------
// The walker makes one command a beat for the lane from its registers: a
// beat's figures (content words and ULPDU octets in it, whether the CRC
// word is in it, its marker) are worked out one beat ahead, against
// thresholds that are constants or set per FPDU. The command register C
// holds a beat's command while the beat is read from the buffer, and the
// lane takes it from there. C also checks the beat's marker against the
// beat's octets; a bad marker, an FPDU cut by the segment's end, or a
// marker behind the FPDU pointing to it (checked after the walk) make the
// FPDU bad outside the lane, which then drops its frame as for a bad CRC.

localparam MW = 9 - LN;                     // MKP = 2^MW beats from one marker to the next
localparam integer NI = N;
localparam integer W2I = 2 * WORDS;
localparam integer N2I = 2 * N;
localparam [6:0] W2 = W2I[6:0];
localparam [OL+1:0] N2 = N2I[OL+1:0];
localparam [OL-1:0] NO = NI[OL-1:0];
localparam [OL+1:0] FOUR = 4;

reg [SEG_AW:0] k_reg;          // the walker's beat
reg            wk_reg;         // it has a beat to issue
reg            first_reg;
reg            kmk_reg;        // a marker in the beat's word 0 (not on the first beat)
reg [MW-1:0]   mkc_reg;        // beats after this one to the next marker beat, less 1
reg [14:0]     t_rem_reg;      // content words left (the beat's on), the CRC word included
reg [15:0]     u_rem_reg;      // ULPDU octets left
reg [15:0]     ulen_reg;
reg [15:0]     h_len_reg;
reg [WL-1:0]   avail_reg;      // content words in the beat
reg            w_ends_reg;     // its CRC word is in the beat
reg [WL-1:0]   crcw_reg;       // ... that word (mod 2^WL)
reg [6:0]      thr_t0_reg;     // next beat ends the FPDU if t_rem <= this (no marker in it)
reg [6:0]      thr_t1_reg;     // ... (a marker in it)
reg [OL-1:0]   ulp_lo_reg;     // the ULPDU's first lane in the beat
reg [OL-1:0]   room_reg;       // N - ulp_lo
reg            u_fills_reg;    // u_rem >= room
reg [OL-1:0]   uh_reg;         // ulp_lo + u_rem (mod 2^OL; the ULPDU's end if it ends here)
reg [OL+1:0]   thr_u0_reg;     // next beat filled if u_rem >= this (no marker in it)
reg [OL+1:0]   thr_u1_reg;     // ... (a marker in it)
reg            k_last_reg;     // the beat holds the segment's last octet
reg [PW-1:0]   dist_reg;       // k * N - s
reg            mkbad_reg;      // the FPDU is bad (markers, or cut by the segment's end)
reg [PW-1:0]   end_reg;        // past the FPDU's CRC
reg            vgot_reg, vgood_reg, fdone_reg;
// per segment
reg [SEG_AW:0] lastk_reg;      // the beat of its last octet
reg [SEG_AW:0] lastkm1_reg;
reg [WL-1:0]   e_w_reg;        // whole words of it in that beat
reg [MW-1:0]   mk0_reg;        // the first marker beat, mod MKP

wire [WL-1:0] s_w = {1'b0, s_reg[LN-1:2]};
wire          w_abort = k_last_reg && (!w_ends_reg || crcw_reg >= e_w_reg);
wire          w_last = w_ends_reg || w_abort;
// the next beat
wire          kmk_n = mkc_reg == {MW{1'b0}};
// (The loop's sums and comparisons as fadd and gt33: 4 LUT levels at most.)
wire [32:0]   t_rem_d = fadd({17'd0, t_rem_reg}, {17'd0, ~{{(15-WL){1'b0}}, avail_reg}}, 1'b1);
wire [14:0]   t_rem_n = t_rem_d[14:0];
wire          le_t0 = !gt33({18'd0, t_rem_reg}, {26'd0, thr_t0_reg});
wire          le_t1 = !gt33({18'd0, t_rem_reg}, {26'd0, thr_t1_reg});
wire          ge_u0 = !gt33({{(31-OL){1'b0}}, thr_u0_reg}, {17'd0, u_rem_reg});
wire          ge_u1 = !gt33({{(31-OL){1'b0}}, thr_u1_reg}, {17'd0, u_rem_reg});
wire [32:0]   u_rem_d = fadd({16'd0, u_rem_reg}, {16'd0, ~{{(16-OL){1'b0}}, room_reg}}, 1'b1);
wire [OL-1:0] u_low_n = u_fills_reg ? u_rem_reg[OL-1:0] - room_reg : {OL{1'b0}};

// ---- C: the beat's command, its octets on seg_rd --------------------------------------------

reg            c_valid_reg;
reg            c_first_reg, c_last_reg, c_abort_reg, c_lead_reg, c_kmk_reg;
reg [PW-1:0]   c_dist_reg;
reg [WL-1:0]   c_crc_lo_reg, c_crc_hi_reg, c_crcw_reg;
reg [OL-1:0]   c_ulp_lo_reg, c_ulp_hi_reg;

wire lane_ready;
wire c_adv = !c_valid_reg || lane_ready;
wire issue = state_reg == S_WALK && wk_reg && c_adv;
wire l_take = c_valid_reg && lane_ready;
// The beat's marker: the leading one must say 0, one inside the distance
// back to the ULPDU_Length field, in words (FPDUPTR's low bits ignored, as
// in mpa_rx_walk).
wire [13:0]   w_ptr = {seg_rd[23:16], seg_rd[31:26]};
wire          w_mkbad = c_first_reg ? (c_lead_reg && w_ptr != 14'd0) :
                        (c_kmk_reg && {{(PW-16){1'b0}}, w_ptr} != c_dist_reg[PW-1:2]);
wire [15:0]   h_len = {seg_rd[32*s_w +: 8], seg_rd[32*s_w + 8 +: 8]};

// Per segment: the octets of the segment in its last beat, the first
// marker beat.
wire [LN:0]   e_lo = {1'b0, el_reg[LN-1:0]} + 1'b1;
wire [8:0]    mk_first = 9'd0 - mb_reg;

// No marker behind the FPDU may point to it: checked over two clocks after
// the walk (lb_*), before the verdict can be used.
reg [K-1:0]   lb_vec_reg;
reg           lb_reg;
reg [1:0]     lb_n_reg;
integer li;

// ---- the lane: CRC32c, ULPDU packing, verdict ---------------------------------------------------

wire [DATA_W-1:0] p_tdata;
wire [N-1:0]      p_tkeep;
wire              p_tvalid, p_tlast, p_first_unused, p_last_unused;
wire              p_tready;
wire [CONN_W-1:0] p_conn_unused, v_conn_unused, wb_conn_unused;
wire [15:0]       p_ulen;
wire [7:0]        v_vseq_unused;
wire              v_valid;
wire [2:0]        v_code;
wire              wb_valid_unused;
wire [31:0]       wb_state_unused;

mpa_rx_lane #(.DATA_W(DATA_W), .CONN_W(CONN_W)) lane (
    .clk(clk), .rst(rst),
    .s_valid(c_valid_reg), .s_ready(lane_ready), .s_data(seg_rd),
    .s_crc_lo(c_crc_lo_reg), .s_crc_hi(c_crc_hi_reg), .s_crcw(c_crcw_reg[WL-2:0]),
    .s_ulp_lo(c_ulp_lo_reg), .s_ulp_hi(c_ulp_hi_reg),
    .s_run_first(c_first_reg), .s_run_last(c_last_reg), .s_resume(1'b0), .s_nopiece(1'b0),
    .s_state(32'd0), .s_fpdu_first(1'b1), .s_fpdu_end(1'b1), .s_conn(conn_reg),
    .s_ulen(ulen_reg), .s_crc_en(crc_en_reg), .s_mkbad(1'b0), .s_lenbad(1'b0),
    .s_vseq(8'd0),
    .m_tdata(p_tdata), .m_tkeep(p_tkeep), .m_tvalid(p_tvalid), .m_tready(p_tready),
    .m_tlast(p_tlast), .m_conn(p_conn_unused), .m_ulen(p_ulen), .m_first(p_first_unused),
    .m_last(p_last_unused),
    .v_valid(v_valid), .v_ready(1'b1), .v_conn(v_conn_unused), .v_code(v_code),
    .v_vseq(v_vseq_unused),
    .wb_valid(wb_valid_unused), .wb_conn(wb_conn_unused), .wb_state(wb_state_unused)
);

// ---- output buffer: a frame is kept only if its verdict is good -------------------------------

reg [SEG_AW:0] o_wp_reg, o_cp_reg, o_rp_reg;   // written, committed, read
wire [SEG_AW:0] o_used = o_wp_reg - o_rp_reg;
// Room for the lane's next word, from registers: room in the next clock
// while at least two words will be free after this clock's write (at most
// one goes in a clock), so the buffer holds up to 2^SEG_AW - 1 words; a
// frame waiting for its verdict (at most 2047 words of a 9000-octet ULPDU
// at W = 64) fits.
reg o_room_reg;
assign p_tready = o_room_reg;
wire o_push = p_tvalid && p_tready;
// The FPDU's ULPDU_Length field's sequence number, base + s, a two-clock
// sum worked out while its header is read (s is set two clocks before its
// first beat can reach the lane, and stays until its last is written).
reg [161:0] sq_sa_reg;
reg [31:0]  s_seq32;

reg  o_vld_reg;                  // o_rd holds a word not yet at the output
wire o_move = o_vld_reg && (!m_early_tvalid || m_early_tready);
wire o_issue = o_rp_reg != o_cp_reg && (!o_vld_reg || o_move);
wire [OUT_W-1:0] o_rd;

sdp_ram #(.WIDTH(OUT_W), .ADDR_W(SEG_AW)) out_ram (
    .clk(clk),
    .wr_en(o_push), .wr_addr(o_wp_reg[SEG_AW-1:0]),
    .wr_data({p_tdata, p_tkeep, p_tlast, s_seq32, p_ulen, conn_reg}),
    .rd_en(o_issue), .rd_addr(o_rp_reg[SEG_AW-1:0]), .rd_data(o_rd)
);

always @(posedge clk) begin
    if (m_early_tvalid && m_early_tready) begin
        m_early_tvalid <= 1'b0;
    end
    if (o_move) begin
        m_early_tvalid <= 1'b1;
        {m_early_tdata, m_early_tkeep, m_early_tlast, m_early_tuser} <= o_rd;
    end
    o_vld_reg <= o_issue || (o_vld_reg && !o_move);
    o_room_reg <= o_used < {1'b0, {SEG_AW{1'b1}}} && !(o_push && o_used == {1'b0, {SEG_AW{1'b1}}} - 1'b1);
    if (o_issue) begin
        o_rp_reg <= o_rp_reg + 1'b1;
    end
    if (rst) begin
        m_early_tvalid <= 1'b0;
        o_vld_reg <= 1'b0;
        o_rp_reg <= {(SEG_AW + 1){1'b0}};
        o_room_reg <= 1'b0;
    end
end

assign busy = state_reg != S_IDLE || o_rp_reg != o_wp_reg || o_vld_reg || m_early_tvalid;

// ---- control ------------------------------------------------------------------------------

// After an FPDU is found: the one right behind it (past a marker at its
// end), worked out while the verdict is awaited. The verdict is taken from
// registers: the lane's (vgot, vgood), its frame's end (fdone), and the
// checks outside the lane (mkbad, lb).
reg [PW-1:0]  next_s_reg;
reg           next_mk_reg;
reg           end_in_reg;        // end < e: the segment goes on behind the FPDU
wire          v_done = vgot_reg && fdone_reg && lb_n_reg == 2'd2;
wire          v_good = vgood_reg && !mkbad_reg && !lb_reg;
// Past the CRC word of the walker's beat: 4 (crcw + 1) octets into it.
wire [SEG_AW:0] k_inc = k_reg + 1'b1;
wire [WL-2:0]   crcw_inc = crcw_reg[WL-2:0] + 1'b1;
wire [PW-1:0]   w_end = {{(PW-SEG_AW-1-LN){1'b0}},
                         (crcw_inc == {(WL-1){1'b0}}) ? {k_inc, {LN{1'b0}}} : {k_reg, crcw_inc, 2'b00}};

// The sums (fadd: one clock, 4 LUT levels); operands zero-extended, a
// subtrahend as its complement within the sum's width.
localparam [PW-1:0] N_PW = NI[PW-1:0];
localparam [PW-1:0] FOUR_PW = 4;
wire [LN:0] a_p3 = {1'b0, a_reg} + {{(LN-1){1'b0}}, 2'd3};
wire [32:0] e_sum = fadd({{(32-LN){1'b0}}, a_reg}, {16'd0, len_reg}, 1'b0);
wire [32:0] el_sum = fadd({{(32-PW){1'b0}}, e_reg}, {{(32-PW){1'b0}}, {PW{1'b1}}}, 1'b0);
wire [32:0] elm_sum = fadd({{(32-PW){1'b0}}, e_reg}, {{(32-PW){1'b0}}, ~N_PW}, 1'b0);
wire [32:0] em8_sum = fadd({{(31-PW){1'b0}}, 1'b0, e_reg}, {{(31-PW){1'b0}}, ~{{(PW-2){1'b0}}, 3'd7}}, 1'b0);
wire [32:0] lim_sum = fadd({{(31-PW){1'b0}}, 1'b0, e_reg}, {{(31-PW){1'b0}}, ~{1'b0, p0_reg | FOUR_PW}}, 1'b1);
wire [32:0] ds_sum = fadd({{(32-PW){1'b0}}, {{(PW-SEG_AW-1-LN){1'b0}}, k_reg, {LN{1'b0}}}},
                          {{(32-PW){1'b0}}, ~s_reg}, 1'b1);
wire [32:0] t_rem0 = fadd({16'd0, h_len_reg}, 32'd9, 1'b0);
reg  [PW-1:0] ds_reg;
wire [72:0] sq_sum = sum72b(sq_sa_reg);
wire [72:0] bs_sum = sum72b(bs_sa_reg);

always @(*) begin
    seg_re = 1'b0;
    seg_ra = mk_pos_reg[SEG_AW+LN-1:LN];
    case (state_reg)
    S_DISC: seg_re = disc_more;
    S_HDR: begin
        seg_re = 1'b1;
        seg_ra = from_reg[SEG_AW+LN-1:LN];
    end
    S_WALK: begin
        seg_re = issue;
        seg_ra = k_reg[SEG_AW-1:0];
    end
    default: ;
    endcase
end

always @(posedge clk) begin
    if (x_go) begin
        exc_mid_reg <= !s_exc_tlast;
    end
    m_skip_valid <= x_go && !exc_mid_reg && x_ooo && (!x_cap || scanning);
    m_skip_conn <= x_conn;
    m_skip_seq <= x_seq;
    m_skip_reason <= x_cap ? 2'd1 : 2'd2;
    if (o_push) begin
        o_wp_reg <= o_wp_reg + 1'b1;
    end

    case (state_reg)
    S_IDLE: begin
        if (look) begin
            conn_reg <= x_conn;
            seq_reg <= x_seq;
            state_reg <= S_LOOK;
        end
    end
    S_LOOK: begin
        cap_en_reg <= set_rd[10];
        crc_en_reg <= set_rd[9];
        a_reg <= seq_reg[LN-1:0] - set_rd[LN-1:0];
        mb_reg <= {seq_reg[8:LN] - set_rd[8:LN] - {{(8-LN){1'b0}}, seq_reg[LN-1:0] < set_rd[LN-1:0]},
                   {LN{1'b0}}};
        prev_reg <= {DATA_W{1'b0}};
        wr_beat_reg <= {(SEG_AW + 1){1'b0}};
        state_reg <= S_CAP;
    end
    S_CAP: begin
        if (cap_go) begin
            prev_reg <= s_exc_tdata;
            if (seg_wr) begin
                wr_beat_reg <= wr_beat_reg + 1'b1;
            end
            if (!exc_mid_reg) begin
                len_reg <= x_len;
                extra_reg <= {1'b0, a_reg} + len_tail > {1'b1, {LN{1'b0}}};
            end
            if (s_exc_tlast) begin
                state_reg <= !cap_en_reg ? S_IDLE :
                             ((!exc_mid_reg ? {1'b0, a_reg} + len_tail > {1'b1, {LN{1'b0}}} : extra_reg) ?
                              S_FLUSH : S_PREP);
                prep_n_reg <= 2'd2;
            end
        end
        // The first marker position at or after the segment's first octet.
        p0_reg <= (mb_reg == 9'd0 && a_reg != {LN{1'b0}}) ? 512 :
                  {{(PW-9){1'b0}}, 9'd0 - mb_reg};
        mk_n_reg <= {KW{1'b0}};
    end
    S_FLUSH: begin
        state_reg <= S_PREP;
    end
    S_PREP: begin
        // The segment's figures: three clocks from its length (S_CAP's
        // last clock may have been the clock its length came in).
        prep_n_reg <= prep_n_reg - 1'b1;
        mk_pos_reg <= p0_reg;
        if (prep_n_reg == 2'd0) begin
            state_reg <= S_DISC;
        end
    end
    S_DISC: begin
        if (disc_more) begin
            mk_pos_reg <= {mk_pos_reg[PW-1:9] + 1'b1, mk_pos_reg[8:0]};
            mk_n_reg <= mk_n_reg + 1'b1;
        end else if (!d1_valid_reg && !d2_valid_reg && !d3_valid_reg && !d4_valid_reg) begin
            sel_i_reg <= {KW{1'b0}};
            cov_reg <= {PWW{1'b0}};
            fl_any_reg <= 1'b0;
            state_reg <= S_SEL;
        end
    end
    S_SEL: begin
        // R: read the next candidate; G: check the one read; take the one
        // checked.
        r_valid_reg <= sel_i_reg != mk_n_reg;
        if (sel_i_reg != mk_n_reg) begin
            sel_i_reg <= sel_i_reg + 1'b1;
        end
        g_go_reg <= r_go;
        if (g_go_reg) begin
            s_reg <= {g_t_reg, 2'b00};
            from_reg <= {g_f_reg, 2'b00};
            lead_reg <= g_lead_reg;
            sel_i_reg <= g_i_reg + 1'b1;
            r_valid_reg <= 1'b0;
            g_go_reg <= 1'b0;
            state_reg <= S_HDR;
        end else if (sel_end) begin
            state_reg <= S_IDLE;
        end
    end
    S_HDR: begin
        k_reg <= {1'b0, from_reg[SEG_AW+LN-1:LN]};
        fl_reg <= s_reg[PW-1:2];
        fl_any_reg <= 1'b1;
        state_reg <= S_HDR2;
    end
    S_HDR2: begin
        // The ULPDU_Length field, big-endian, in the word of s (FPDUs
        // start on words).
        h_len_reg <= h_len;
        state_reg <= S_HDR3;
    end
    S_HDR3: begin
        ulen_reg <= h_len_reg;
        u_rem_reg <= h_len_reg;
        // Content words from the ULPDU_Length word through the CRC word:
        // (2 + len + pad) / 4 + 1 = floor((len + 9) / 4).
        t_rem_reg <= t_rem0[16:2];
        first_reg <= 1'b1;
        avail_reg <= WORDS_W - s_w;
        ulp_lo_reg <= {1'b0, s_reg[LN-1:2], 2'b10};
        room_reg <= NO - {1'b0, s_reg[LN-1:2], 2'b10};
        k_last_reg <= k_reg == lastk_reg;
        dist_reg <= ds_reg;
        mkc_reg <= mk0_reg - k_reg[MW-1:0] - 1'b1;
        mkbad_reg <= 1'b0;
        vgot_reg <= 1'b0;
        fdone_reg <= 1'b0;
        state_reg <= S_HDR4;
    end
    S_HDR4: begin
        w_ends_reg <= {{(15-WL){1'b0}}, avail_reg} >= t_rem_reg;
        crcw_reg <= s_w + t_rem_reg[WL-1:0] - 1'b1;
        u_fills_reg <= u_rem_reg >= {{(16-OL){1'b0}}, room_reg};
        uh_reg <= ulp_lo_reg + u_rem_reg[OL-1:0];
        thr_t0_reg <= {{(7-WL){1'b0}}, avail_reg} + {{(7-WL){1'b0}}, WORDS_W};
        thr_t1_reg <= {{(7-WL){1'b0}}, avail_reg} + {{(7-WL){1'b0}}, WORDS_W} - 1'b1;
        thr_u0_reg <= {2'b00, room_reg} + {2'b00, NO};
        thr_u1_reg <= {2'b00, room_reg} + {2'b00, NO} - FOUR;
        wk_reg <= 1'b1;
        state_reg <= S_WALK;
    end
    S_WALK: begin
        if (issue) begin
            if (w_last) begin
                wk_reg <= 1'b0;
                end_reg <= w_end;
                lb_n_reg <= 2'd0;
                state_reg <= S_VWAIT;
            end else begin
                k_reg <= k_inc;
                first_reg <= 1'b0;
                kmk_reg <= kmk_n;
                mkc_reg <= kmk_n ? {MW{1'b1}} : mkc_reg - 1'b1;   // 2^MW - 1, or one less
                t_rem_reg <= t_rem_n;
                avail_reg <= WORDS_W - {{(WL-1){1'b0}}, kmk_n};
                w_ends_reg <= kmk_n ? le_t1 : le_t0;
                crcw_reg <= t_rem_reg[WL-1:0] - avail_reg + {{(WL-1){1'b0}}, kmk_n} - 1'b1;
                thr_t0_reg <= W2 - {6'd0, kmk_n};
                thr_t1_reg <= W2 - 7'd1 - {6'd0, kmk_n};
                u_rem_reg <= u_fills_reg ? u_rem_d[15:0] : 16'd0;
                ulp_lo_reg <= {{(OL-3){1'b0}}, kmk_n, 2'b00};
                room_reg <= NO - {{(OL-3){1'b0}}, kmk_n, 2'b00};
                u_fills_reg <= u_fills_reg && (kmk_n ? ge_u1 : ge_u0);
                uh_reg <= {{(OL-3){1'b0}}, kmk_n, 2'b00} + u_low_n;
                thr_u0_reg <= N2 - {{(OL-1){1'b0}}, kmk_n, 2'b00};
                thr_u1_reg <= N2 - FOUR - {{(OL-1){1'b0}}, kmk_n, 2'b00};
                k_last_reg <= k_reg == lastkm1_reg;
                dist_reg <= {dist_reg[PW-1:LN] + 1'b1, dist_reg[LN-1:0]};
            end
        end
    end
    S_VWAIT: begin
        if (v_valid) begin
            vgot_reg <= 1'b1;
            vgood_reg <= v_code == 3'd0;
        end
        if (o_push && p_tlast) begin
            fdone_reg <= 1'b1;
        end
        if (lb_n_reg != 2'd2) begin
            lb_n_reg <= lb_n_reg + 1'b1;
        end
        if (v_done) begin
            if (v_good) begin
                o_cp_reg <= o_wp_reg;
                cov_reg <= end_reg[PW-1:2];
                if (end_in_reg) begin
                    // RFC 5044 6 case 3: the FPDU right behind this one.
                    s_reg <= next_s_reg;
                    from_reg <= end_reg;
                    lead_reg <= next_mk_reg;
                    state_reg <= S_HDR;
                end else begin
                    state_reg <= S_SEL;
                end
            end else begin
                o_wp_reg <= o_cp_reg;
                state_reg <= S_SEL;
            end
        end
    end
    // verilator coverage_off
    // Unreachable: state_reg only ever holds the states named above; the
    // arm returns an upset register to S_IDLE.
    default: state_reg <= S_IDLE;
    // verilator coverage_on
    endcase

    // C: a command issued, or taken by the lane
    if (l_take) begin
        c_valid_reg <= 1'b0;
        mkbad_reg <= mkbad_reg || w_mkbad || c_abort_reg;
    end
    if (issue) begin
        c_valid_reg <= 1'b1;
        c_first_reg <= first_reg;
        c_last_reg <= w_last;
        c_abort_reg <= w_abort;
        c_lead_reg <= lead_reg;
        c_kmk_reg <= kmk_reg;
        c_dist_reg <= dist_reg;
        c_crc_lo_reg <= first_reg ? {1'b0, from_reg[LN-1:2]} : {WL{1'b0}};
        c_crc_hi_reg <= (w_ends_reg && !w_abort) ? crcw_reg : WORDS_W;
        c_crcw_reg <= crcw_reg;
        c_ulp_lo_reg <= ulp_lo_reg;
        c_ulp_hi_reg <= u_fills_reg ? NO : uh_reg;
    end

    // discovery: D1..D4 (see "the candidates")
    d1_valid_reg <= disc_more;
    d1_p_reg <= mk_pos_reg[PW-1:2];
    d1_idx_reg <= mk_n_reg;
    d2_valid_reg <= d1_valid_reg;
    d2_idx_reg <= d1_idx_reg;
    d2_p_reg <= d1_p_reg;
    d2_z_reg <= d1_q == 14'd0;
    d2_u_reg <= d1_u[PWW:0];
    d2_t_reg <= d1_t[PWW:0];
    d3_valid_reg <= d2_valid_reg;
    d3_idx_reg <= d2_idx_reg;
    d3_p_reg <= d2_p_reg;
    d3_t_reg <= d2_tw;
    d3_f_reg <= d2_lead ? d2_uw : d2_tw;
    d3_ok_reg <= d2_z_reg || !d2_t_reg[PWW];
    d3_onmk_reg <= d2_tw[6:0] == m0w_reg;
    d3_lead_reg <= d2_lead;
    d4_valid_reg <= d3_valid_reg;
    d4_idx_reg <= d3_idx_reg;
    d4_p_reg <= d3_p_reg;
    d4_t_reg <= d3_t_reg;
    d4_f_reg <= d3_f_reg;
    d4_ok_reg <= d3_ok_reg;
    d4_st_reg <= d3_ok_reg && !d3_onmk_reg && d3_fits && d3_fge;
    d4_lead_reg <= d3_lead_reg;
    if (d4_valid_reg) begin
        t_tab[d4_idx_reg] <= d4_t_reg;
        f_tab[d4_idx_reg] <= d4_f_reg;
        m_tab[d4_idx_reg] <= d4_p_reg;
        v_tab[d4_idx_reg] <= d4_ok_reg;
        s_tab[d4_idx_reg] <= d4_st_reg;
        l_tab[d4_idx_reg] <= d4_lead_reg;
    end

    // selection: R and G (see "candidate selection")
    r_i_reg <= sel_i_reg;
    r_t_reg <= t_tab[sel_i_reg];
    r_f_reg <= f_tab[sel_i_reg];
    r_st_reg <= s_tab[sel_i_reg];
    r_lead_reg <= l_tab[sel_i_reg];
    g_i_reg <= r_i_reg;
    g_t_reg <= r_t_reg;
    g_f_reg <= r_f_reg;
    g_lead_reg <= r_lead_reg;

    // after the walk: markers behind the FPDU pointing to it; the next FPDU
    for (li = 0; li < K; li = li + 1) begin
        lb_vec_reg[li] <= li < mk_n_reg && v_tab[li] && t_tab[li] == s_reg[PW-1:2] &&
                          !gt33({{(33-PWW){1'b0}}, end_reg[PW-1:2]}, {{(33-PWW){1'b0}}, m_tab[li]});
    end
    lb_reg <= |lb_vec_reg;
    next_mk_reg <= is_mk(mb_reg, end_reg);
    // A marker position is a multiple of N: + 4 carries nothing.
    next_s_reg <= is_mk(mb_reg, end_reg) ? (end_reg | 4) : end_reg;
    end_in_reg <= gt33({{(33-PW){1'b0}}, e_reg}, {{(33-PW){1'b0}}, end_reg});

    // per FPDU, from s and k (set up while the header is read)
    sq_sa_reg <= sum72a({40'd0, base_reg}, {{(72-PW){1'b0}}, s_reg}, 1'b0);
    s_seq32 <= sq_sum[31:0];
    ds_reg <= ds_sum[PW-1:0];

    // per segment, from its settings and length (stable for the search)
    bs_sa_reg <= sum72a({40'd0, seq_reg}, ~{{(72-LN){1'b0}}, a_reg}, 1'b1);
    base_reg <= bs_sum[31:0];
    e_reg <= e_sum[PW-1:0];
    el_reg <= el_sum[PW-1:0];
    lim_reg <= lim_sum[PW:0];
    mk_cnt_reg <= lim_reg[PW] ? {KW{1'b0}} : lim_reg[KW+8:9] + 1'b1;
    w8_reg <= em8_sum[PW:2];
    aw_reg <= a_p3[LN:2];
    m0w_reg <= mk_first[8:2];
    lastk_reg <= el_reg[SEG_AW+LN:LN];
    lastkm1_reg <= elm_sum[SEG_AW+LN:LN];
    e_w_reg <= e_lo[LN:2];
    mk0_reg <= mk_first[8:LN];

    if (rst) begin
        state_reg <= S_IDLE;
        exc_mid_reg <= 1'b0;
        m_skip_valid <= 1'b0;
        d1_valid_reg <= 1'b0;
        d2_valid_reg <= 1'b0;
        d3_valid_reg <= 1'b0;
        d4_valid_reg <= 1'b0;
        r_valid_reg <= 1'b0;
        g_go_reg <= 1'b0;
        o_wp_reg <= {(SEG_AW + 1){1'b0}};
        o_cp_reg <= {(SEG_AW + 1){1'b0}};
        v_tab <= {K{1'b0}};
        c_valid_reg <= 1'b0;
        wk_reg <= 1'b0;
    end
end

// Bits not needed: the base above its offset in 512, the word offset of a
// candidate's first octet (a word), the lanes' per-frame fields the block
// keeps itself.
wire unused_ok = &{1'b0, cfg_base[31:9], from_reg[1:0], from_reg[PW-1:SEG_AW+LN], c_dist_reg[1:0],
    p_first_unused, p_last_unused, p_conn_unused, v_conn_unused, wb_conn_unused,
    v_vseq_unused, wb_valid_unused, wb_state_unused, c_crcw_reg[WL-1], e_lo[1:0], mk_first[LN-1:0],
    el_reg[PW-1:SEG_AW+LN+1], elm_sum[LN-1:0], em8_sum[1:0], a_p3[1:0],
    d1_u[32:PWW+1], d1_t[32:PWW+1], e_sum[32:PW], el_sum[32:PW], elm_sum[32:SEG_AW+LN+1], em8_sum[32:PW+1],
    lim_sum[32:PW+1], ds_sum[32:PW], t_rem0[32:17], t_rem0[1:0], sq_sum[72:32], bs_sum[72:32],
    t_rem_d[32:15], u_rem_d[32:16]};

endmodule

`resetall
