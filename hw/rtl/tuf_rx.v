// tuf_rx: the TUF receive block (draft-ietf-tsvwg-tcp-ulp-frame-01 4.4),
// DATA_W bits per clock, for 2^CONN_W connections. TCP segment payloads
// in; for each segment of a connection in TUF mode, the ULPDU containment
// test; a segment that passes goes on as one ULPDU piece (header and CRC32c
// trailer removed) with a verdict after it, in the form mpa_rx hands its
// pieces to rx_join and ddp_rx; every other segment goes out whole on the
// exception stream with a reason. iwarp/tuf's Seam is the model
// (tests/tuf_rx checks the block against it through rnic-oracle tuf_seam).
//
// The test, in this order (sequence arithmetic mod 2^32), against the
// connection's next expected sequence number rcv_nxt:
//   exception 1  connection not in TUF mode (cfg_en = 0)
//   exception 2  connection in error (a bad trailer, or fail_*)
//   exception 5  len = 0
//   exception 3  out of order: seq after rcv_nxt
//   exception 4  duplicate: seq+len at or before rcv_nxt
//   exception 6  not contained: the segment covers rcv_nxt but is not one
//                whole FPDU starting there: seq = rcv_nxt, Length + 8 = len,
//                Key = the connection's key and Length >= 4 (room for the
//                trailer) must all hold
//   taken        rcv_nxt becomes seq+len; the ULPDU (octets 8 .. len-5)
//                goes out, the trailer is checked by a CRC32c over octets
//                0 .. len-5 (header and ULPDU, docs/tuf.md) and the verdict
//                follows: 0 good, 2 CRC (the connection is then in error).
// The block never scans a segment for an FPDU (4.4): a segment that does
// not start with the FPDU is an exception, and the host, which sees the
// stream, delineates it in software (iwarp/tuf Receiver) and may give the
// FPDUs it finds back one a segment, which then pass.
//
// Early placement (3.2.4: placing a segment that arrives past a hole). An
// out-of-order segment (exception 3) that is one whole FPDU with the
// connection's key still goes to the exception stream (the host gives it
// back once the hole before it closes, and it is then taken in order and
// delivered), but on the way it is also copied into the early buffer
// (SEG_OCTETS) and its trailer checked; if the trailer matches, its ULPDU
// goes out on m_early for early placement (ddp_rx's early input: placed,
// never delivered). One segment at a time: a candidate that comes while
// the buffer is busy, or is longer than SEG_OCTETS, passes without the
// copy and is reported on m_skip (reason 1 busy, 2 too long). The model
// is the same: iwarp/tuf Seam's Early outcome.
//
// Configuration, cfg_*: connection cfg_conn in TUF mode (cfg_en) with the
// peer's key (cfg_key, signalled when TUF was enabled, 4.3) and rcv_nxt =
// cfg_base (the first FPDU's sequence number); clears its error. Accepted
// between segments only (cfg_ready); configure a connection while none of
// its segments is in the block. A segment waits while cfg_valid is high.
// fail_*: marks a connection in error, as a bad verdict does (the QP
// failed); held in a one-entry register until written.
//
// Input s_axis: one frame per TCP segment, lane-0 aligned, every beat full
// but the last, ceil(len/N) beats (one beat, tkeep 0, for len = 0);
// tuser = {conn, seq[31:0], len[15:0]}, read on the first beat.
// Output m_axis: one piece per taken segment, the whole ULPDU from lane 0,
// tkeep all ones but in the last beat (all zero for an empty ULPDU);
// tuser = {ulpdu_len[15:0], conn, first = 1, last (tlast beat only)}, as
// mpa_rx's pieces.
// m_verdict: tdata = code[2:0] (0 good, 2 CRC), tuser = conn; one per
// taken segment, in order, each after its piece's tlast beat has gone.
// After a code 2 the connection's segments go to the exception stream.
// m_exc: the segments not taken, as they came in; tuser = {conn, seq,
// len, reason[2:0]} (mpa_rx's exception format).
// m_early: one frame per early ULPDU, lane-0 aligned, tkeep all ones but
// in the last beat (octets past the ULPDU zero); tuser = {seq[31:0] of the
// FPDU, ulpdu_len[15:0], conn} (mpa_rx_ooo's early format). The readout
// takes two clocks a beat: early placement is off the fast path.
// m_skip: a one-clock pulse (no ready) per early candidate passed without
// the copy: conn, seq, reason.
// early_busy: a candidate is in the early buffer (being copied, checked or
// read out) or its last m_early beat waits (rnic_rx's ooo_busy).
//
// Latency: a segment's first beat is taken in one clock and classified in
// the next (the connection's tables are block RAM, read on the first
// beat); a taken segment's first output beat leaves with its second input
// beat (the 8-octet header shift), the exception stream's first beat one
// clock after classification. The verdict follows the trailer by the
// CRC32c block's 7 clocks and one more.
// Throughput: one input beat a clock within a segment, plus one clock a
// segment for the classification and one for a taken segment whose ULPDU
// ends in its last beat (at W > 64, when the trailer does not fill it):
// segments of B beats go through at B/(B+1) or B/(B+2) beats a clock
// (tests/tuf_rx measures it).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module tuf_rx #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter SEG_OCTETS = 16384          // the early buffer: longest segment copied
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire                    cfg_valid,
    output wire                    cfg_ready,
    input  wire [CONN_W-1:0]       cfg_conn,
    input  wire                    cfg_en,
    input  wire [47:0]             cfg_key,
    input  wire [31:0]             cfg_base,

    input  wire                    fail_valid,
    output wire                    fail_ready,
    input  wire [CONN_W-1:0]       fail_conn,

    input  wire [DATA_W-1:0]       s_axis_tdata,
    input  wire [DATA_W/8-1:0]     s_axis_tkeep,
    input  wire                    s_axis_tvalid,
    output wire                    s_axis_tready,
    input  wire                    s_axis_tlast,
    input  wire [CONN_W+47:0]      s_axis_tuser,

    output wire [DATA_W-1:0]       m_axis_tdata,
    output wire [DATA_W/8-1:0]     m_axis_tkeep,
    output wire                    m_axis_tvalid,
    input  wire                    m_axis_tready,
    output wire                    m_axis_tlast,
    output wire [CONN_W+17:0]      m_axis_tuser,

    output wire [2:0]              m_verdict_tdata,
    output wire                    m_verdict_tvalid,
    input  wire                    m_verdict_tready,
    output wire [CONN_W-1:0]       m_verdict_tuser,

    output wire [DATA_W-1:0]       m_exc_tdata,
    output wire [DATA_W/8-1:0]     m_exc_tkeep,
    output wire                    m_exc_tvalid,
    input  wire                    m_exc_tready,
    output wire                    m_exc_tlast,
    output wire [CONN_W+50:0]      m_exc_tuser,

    output wire [DATA_W-1:0]       m_early_tdata,
    output wire [DATA_W/8-1:0]     m_early_tkeep,
    output wire                    m_early_tvalid,
    input  wire                    m_early_tready,
    output wire                    m_early_tlast,
    output wire [CONN_W+47:0]      m_early_tuser,

    output wire                    m_skip_valid,
    output wire [CONN_W-1:0]       m_skip_conn,
    output wire [31:0]             m_skip_seq,
    output wire [1:0]              m_skip_reason,
    output wire                    early_busy
);

localparam N = DATA_W / 8;
localparam LN = $clog2(N);
localparam TW = 1 + 48 + 32;                 // table word: {en, key, rcv_nxt}
localparam EB_AW = $clog2(SEG_OCTETS) - LN;  // early buffer: 2^EB_AW beats
localparam integer SEG_OCTETS_I = SEG_OCTETS;
localparam [16:0] SEG_MAX = SEG_OCTETS_I[16:0];

localparam [1:0] EB_IDLE = 2'd0;             // the early buffer is free
localparam [1:0] EB_FILL = 2'd1;             // a candidate's beats are being copied in
localparam [1:0] EB_WAIT = 2'd2;             // copied: waiting for its trailer's check
localparam [1:0] EB_READ = 2'd3;             // its ULPDU going out on m_early

localparam [2:0] S_IDLE = 3'd0;              // waiting for a segment's first beat
localparam [2:0] S_LOOK = 3'd1;              // classifying it (the tables' words are in)
localparam [2:0] S_PASS = 3'd2;              // a taken segment's beats
localparam [2:0] S_FLUSH = 3'd3;             // its piece's last beat, from the held beat
localparam [2:0] S_EXC = 3'd4;               // an exception segment's beats

localparam [2:0] R_TAKEN = 3'd0;
localparam [2:0] R_NOT_ENABLED = 3'd1;
localparam [2:0] R_IN_ERROR = 3'd2;
localparam [2:0] R_OUT_OF_ORDER = 3'd3;
localparam [2:0] R_DUPLICATE = 3'd4;
localparam [2:0] R_EMPTY = 3'd5;
localparam [2:0] R_NOT_CONTAINED = 3'd6;

localparam [2:0] V_GOOD = 3'd0;
localparam [2:0] V_CRC = 3'd2;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("tuf_rx: DATA_W must be 64, 128, 256 or 512, not %0d", DATA_W);
        $finish;
    end
    if (CONN_W < 1 || CONN_W > 16) begin
        $error("tuf_rx: CONN_W must be 1..16, not %0d", CONN_W);
        $finish;
    end
    if (SEG_OCTETS < 2 * N || SEG_OCTETS > 65536 || (SEG_OCTETS & (SEG_OCTETS - 1)) != 0) begin
        $error("tuf_rx: SEG_OCTETS must be a power of two from 2 DATA_W/8 to 65536, not %0d", SEG_OCTETS);
        $finish;
    end
end

// ---- registers -----------------------------------------------------------------

reg [2:0]         state_reg = S_IDLE;
reg [DATA_W-1:0]  h_data_reg;                // the first beat, then the last beat taken
reg [N-1:0]       h_keep_reg;
reg               h_last_reg;
reg [CONN_W-1:0]  conn_reg;
reg [31:0]        seq_reg;
reg [15:0]        len_reg;
reg [15:0]        j_reg;                     // input beats of the segment taken so far
reg [15:0]        ob_reg;                    // output beats of its piece, max(1, ceil(ulpdu_len / N))
reg [15:0]        ulen_reg;
reg [N-1:0]       lkeep_reg;                 // tkeep of the piece's last beat
reg [31:0]        field_reg;                 // the trailer, as far as it has come

reg               mp_valid_reg = 1'b0;
reg [DATA_W-1:0]  mp_data_reg;
reg [N-1:0]       mp_keep_reg;
reg               mp_last_reg;
reg [CONN_W+17:0] mp_user_reg;

reg               mx_valid_reg = 1'b0;
reg [DATA_W-1:0]  mx_data_reg;
reg [N-1:0]       mx_keep_reg;
reg               mx_last_reg;
reg [CONN_W+50:0] mx_user_reg;

reg               v_valid_reg = 1'b0;
reg [2:0]         v_code_reg;
reg [CONN_W-1:0]  v_conn_reg;
reg [4:0]         pdone_reg = 5'd0;          // pieces whose tlast beat has gone (mod 32)
reg [4:0]         vdone_reg = 5'd0;          // verdicts taken into v_*

reg               fail_hold_reg = 1'b0;
reg [CONN_W-1:0]  fail_conn_reg;

reg               early_reg = 1'b0;          // the exception segment is being copied
reg [1:0]         eb_state_reg = EB_IDLE;
reg               er_issue_reg = 1'b0;       // EB_READ: a read goes out this clock (else its word is in)
reg [EB_AW-1:0]   er_addr_reg;
reg [15:0]        er_k_reg;                  // the piece beat the word in completes, plus one
reg [DATA_W-1:0]  er_prev_reg;
reg [31:0]        e_seq_reg;
reg [15:0]        e_ulen_reg;
reg [15:0]        e_ob_reg;
reg [N-1:0]       e_lkeep_reg;
reg [CONN_W-1:0]  e_conn_reg;

reg               me_valid_reg = 1'b0;
reg [DATA_W-1:0]  me_data_reg;
reg [N-1:0]       me_keep_reg;
reg               me_last_reg;
reg [CONN_W+47:0] me_user_reg;

reg               sk_valid_reg = 1'b0;
reg [CONN_W-1:0]  sk_conn_reg;
reg [31:0]        sk_seq_reg;
reg [1:0]         sk_reason_reg;

// ---- the connection tables: {en, key, rcv_nxt} and the error bit ---------------------

wire [TW-1:0]     t_rd;
wire              e_rd;
wire              take0;                     // a first beat taken (tables read)
wire              t_wr;
wire [TW-1:0]     t_wr_data;
wire [CONN_W-1:0] t_wr_addr;
wire              e_wr;
wire [CONN_W-1:0] e_wr_addr;
wire              e_wr_data;

sdp_ram #(.WIDTH(TW), .ADDR_W(CONN_W)) t_ram (
    .clk(clk),
    .wr_en(t_wr), .wr_addr(t_wr_addr), .wr_data(t_wr_data),
    .rd_en(take0), .rd_addr(s_axis_tuser[CONN_W+47:48]), .rd_data(t_rd)
);

sdp_ram #(.WIDTH(1), .ADDR_W(CONN_W)) e_ram (
    .clk(clk),
    .wr_en(e_wr), .wr_addr(e_wr_addr), .wr_data(e_wr_data),
    .rd_en(take0), .rd_addr(s_axis_tuser[CONN_W+47:48]), .rd_data(e_rd)
);

// ---- classification (S_LOOK) ------------------------------------------------------

wire        t_en = t_rd[TW-1];
wire [47:0] t_key = t_rd[79:32];
wire [31:0] t_nxt = t_rd[31:0];
// FPDU header, draft 4.1.1: Length in octets 0-1, Key in octets 2-7, both
// big-endian; octet k of the beat is tdata[8k+7:8k].
wire [15:0] hdr_len = {h_data_reg[7:0], h_data_reg[15:8]};
wire [47:0] hdr_key = {h_data_reg[23:16], h_data_reg[31:24], h_data_reg[39:32],
                       h_data_reg[47:40], h_data_reg[55:48], h_data_reg[63:56]};
// The sequence tests against the table word, read from block RAM this
// clock, are written without a carry chain (rnic_arith.vh; a 32-bit
// difference is 13 LUT levels as a ripple carry, and the classification
// steers the whole block this clock):
//   d_start = seq - rcv_nxt: zero is seq == rcv_nxt; its sign is bit 31 of
//     seq and of rcv_nxt and the borrow into bit 31 (rcv_nxt[30:0] >
//     seq[30:0], gt33);
//   d_end = seq + len - rcv_nxt = seq + len + ~rcv_nxt + 1: zero is seq +
//     len == rcv_nxt (sumeq); its sign is bit 31 of the carry-save form
//     s + c of the three operands (c's bit 0 the + 1) and the carry into
//     bit 31 of s + c (cgp).
`include "rnic_arith.vh"
wire        ds_zero = seq_reg == t_nxt;
wire        ds_neg = seq_reg[31] ^ t_nxt[31] ^ gt33({2'b00, t_nxt[30:0]}, {2'b00, seq_reg[30:0]});
wire [31:0] de_s = seq_reg ^ {16'd0, len_reg} ^ ~t_nxt;
wire [31:0] de_c = {(seq_reg[30:0] & {15'd0, len_reg}) | ((seq_reg[30:0] | {15'd0, len_reg}) & ~t_nxt[30:0]), 1'b1};
wire        de_neg = de_s[31] ^ de_c[31] ^ cgp({2'b00, de_s[30:0] & de_c[30:0]}, {2'b11, de_s[30:0] | de_c[30:0]});
wire        de_zero = sumeq({40'd0, seq_reg}, {56'd0, len_reg}, 1'b0, {40'd0, t_nxt}, {40'd0, {32{1'b1}}});
// Length + 8 = len without a carry chain (sumeq over 17 bits: the carry out too).
wire        len_ok = sumeq({56'd0, hdr_len}, 72'd8, 1'b0, {55'd0, 1'b0, len_reg}, {55'd0, {17{1'b1}}});
wire        form_ok = len_ok && hdr_key == t_key && hdr_len >= 16'd4;
wire        contained = ds_zero && form_ok;
/* verilator lint_off UNUSEDSIGNAL */  // the carry out: sequence numbers wrap (RFC 793)
wire [32:0] seq_end_c = fadd(seq_reg, {16'd0, len_reg}, 1'b0);  // the new rcv_nxt: seq + len (carry select)
/* verilator lint_on UNUSEDSIGNAL */
wire [31:0] seq_end = seq_end_c[31:0];
wire [2:0]  look_reason =
    !t_en                                ? R_NOT_ENABLED :
    e_rd                                 ? R_IN_ERROR :
    len_reg == 16'd0                     ? R_EMPTY :
    !ds_neg && !ds_zero                  ? R_OUT_OF_ORDER :
    de_neg || de_zero                    ? R_DUPLICATE :
    !contained                           ? R_NOT_CONTAINED : R_TAKEN;
// The tests look_reason's order makes, written flat for the two decisions
// that steer the clock: taken is enabled, not in error, not empty, seq =
// rcv_nxt and the form (then d_end = len > 0: no duplicate), equality
// tests only, no sign; an out-of-order one has no sign of d_end either.
wire        look_ok = t_en && !e_rd && len_reg != 16'd0;
wire        look_take = look_ok && contained;
// An out-of-order segment that is one whole FPDU with the key: copied for
// early placement when the buffer is free and it fits.
wire        early_try = look_ok && !ds_neg && !ds_zero && form_ok;
wire        early_fit = {1'b0, len_reg} <= SEG_MAX;
wire        early_go = early_try && early_fit && eb_state_reg == EB_IDLE;
wire [15:0] look_ulen = len_reg - 16'd12;
wire [15:0] look_ob = look_ulen == 16'd0 ? 16'd1 : ({{LN{1'b0}}, look_ulen[15:LN]} + {15'd0, |look_ulen[LN-1:0]});
wire [LN:0] look_lk = look_ulen == 16'd0 ? {(LN+1){1'b0}} : {1'b0, look_ulen[LN-1:0] - 1'b1} + 1'b1;

// ---- CRC32c of header and ULPDU, and the pending trailers -----------------------------

wire              c_ready;
wire              c_valid;
wire [DATA_W-1:0] c_data;
wire [15:0]       c_j;                       // the beat's index in the segment
wire              c_last;
reg  [N-1:0]      c_keep;
wire [31:0]       crc_tdata;
wire [CONN_W-1:0] crc_tid;
wire              crc_tvalid;
wire              v_pop;
wire              f_in_ready;
wire [31:0]       f_out;
wire              f_out_valid;
reg  [31:0]       field_next;                // the trailer with c_data's octets of it
wire              c_early;                   // the beat is an early candidate's
wire              e_pop;

crc32c #(.DATA_W(DATA_W), .ID_W(CONN_W)) crc (
    .clk(clk), .rst(rst),
    .s_axis_tdata(c_data), .s_axis_tkeep(c_keep), .s_axis_tvalid(c_valid), .s_axis_tready(c_ready),
    .s_axis_tlast(c_last), .s_axis_tid(conn_reg), .s_axis_tuser({32'd0, 1'b1}),
    .m_axis_crc_tdata(crc_tdata), .m_axis_crc_tid(crc_tid), .m_axis_crc_tvalid(crc_tvalid),
    .m_axis_crc_tready(v_pop || e_pop)
);

/* verilator lint_off PINCONNECTEMPTY */
wire              f_out_early;
ddp_rx_fifo #(.WIDTH(33), .AW(4)) trailers (
    .clk(clk), .rst(rst),
    .in_data({c_early, field_next}), .in_valid(c_valid && c_last), .in_ready(f_in_ready),
    .in_data2({c_early, field_next}), .in_valid2(1'b0), .in_ready2(),
    .out_data({f_out_early, f_out}), .out_valid(f_out_valid), .out_ready(v_pop || e_pop)
);
/* verilator lint_on PINCONNECTEMPTY */

// The CRC covers the octets before the trailer: positions < len - 4.
wire [31:0] c_off = {16'd0, c_j} << LN;
wire [31:0] c_rem = {16'd0, len_reg} - 32'd4 - c_off;     // covered octets from this beat on
integer ci;
always @(*) begin
    for (ci = 0; ci < N; ci = ci + 1) begin
        c_keep[ci] = !c_rem[31] && c_rem > ci;
    end
end

// Trailer octet t sits at position len - 4 + t: in beat (pos >> LN), lane pos mod N.
wire [16:0] tr_pos0 = {1'b0, len_reg} - 17'd4;
integer ti;
reg [16:0] tr_pos;
reg [16:0] tr_beat;
always @(*) begin
    field_next = field_reg;
    for (ti = 0; ti < 4; ti = ti + 1) begin
        tr_pos = tr_pos0 + ti[16:0];
        tr_beat = tr_pos >> LN;
        if (tr_beat == {1'b0, c_j}) begin
            field_next[8*ti +: 8] = c_data[8*tr_pos[LN-1:0] +: 8];
        end
    end
end

// ---- the FSM ---------------------------------------------------------------------------

wire out_adv_p = !mp_valid_reg || m_axis_tready;
wire out_adv_x = !mx_valid_reg || m_exc_tready;
wire c_ok = c_ready && f_in_ready;

wire look_go = state_reg == S_LOOK && (look_take ? c_ok : out_adv_x && (!early_go || c_ok));
wire pass_go = state_reg == S_PASS && out_adv_p && c_ok && s_axis_tvalid;
wire exc_go = state_reg == S_EXC && out_adv_x && s_axis_tvalid && (!early_reg || c_ok);
wire flush_go = state_reg == S_FLUSH && out_adv_p;

assign take0 = state_reg == S_IDLE && s_axis_tvalid && !cfg_valid;
assign s_axis_tready = (state_reg == S_IDLE && !cfg_valid) || pass_go || exc_go;

// The CRC block gets the first beat from h_* in S_LOOK, the others as they come.
assign c_valid = (look_go && (look_take || early_go)) || pass_go || (exc_go && early_reg);
assign c_early = state_reg == S_LOOK ? !look_take : state_reg == S_EXC;
assign c_data = state_reg == S_LOOK ? h_data_reg : s_axis_tdata;
assign c_j = state_reg == S_LOOK ? 16'd0 : j_reg;
assign c_last = state_reg == S_LOOK ? h_last_reg : s_axis_tlast;

// A piece's beat k is octets 8 + kN .. of the segment: the upper N - 8
// octets of beat k and the lower 8 of beat k + 1.
/* verilator lint_off UNUSEDSIGNAL */
wire [2*DATA_W-1:0] pair = {state_reg == S_FLUSH ? {DATA_W{1'b0}} : s_axis_tdata, h_data_reg};
/* verilator lint_on UNUSEDSIGNAL */
wire [DATA_W-1:0]   shifted = pair[64 +: DATA_W];      // (the low 8 octets are the header or gone)
wire [15:0]         k_out = j_reg - 16'd1;                 // the piece beat the input beat completes
wire                k_is_last = k_out == ob_reg - 16'd1;

// Configuration and the error table's one write port: a bad verdict, then
// a held fail_*, then cfg_* (which waits).
wire v_bad = crc_tdata != f_out;
assign v_pop = crc_tvalid && f_out_valid && !f_out_early && pdone_reg != vdone_reg && (!v_valid_reg || m_verdict_tready);
// An early candidate's check: its copy is complete by then (EB_WAIT).
assign e_pop = crc_tvalid && f_out_valid && f_out_early;
assign cfg_ready = state_reg == S_IDLE && !(v_pop && v_bad) && !fail_hold_reg;
wire cfg_go = cfg_valid && cfg_ready;
assign fail_ready = !fail_hold_reg;

assign t_wr = cfg_go || (look_go && look_take);
assign t_wr_addr = cfg_go ? cfg_conn : conn_reg;
assign t_wr_data = cfg_go ? {cfg_en, cfg_key, cfg_base} : {1'b1, t_key, seq_end};
assign e_wr = (v_pop && v_bad) || fail_hold_reg || cfg_go;
assign e_wr_addr = (v_pop && v_bad) ? crc_tid : fail_hold_reg ? fail_conn_reg : cfg_conn;
assign e_wr_data = (v_pop && v_bad) || fail_hold_reg;

// ---- the early buffer and its readout ----------------------------------------------

wire              eb_wr = (look_go && early_go) || (exc_go && early_reg);
wire [EB_AW-1:0]  eb_wr_addr = state_reg == S_LOOK ? {EB_AW{1'b0}} : j_reg[EB_AW-1:0];
wire [DATA_W-1:0] eb_wr_data = state_reg == S_LOOK ? h_data_reg : s_axis_tdata;
wire              eb_rd = eb_state_reg == EB_READ && er_issue_reg;
wire [DATA_W-1:0] eb_rd_data;

sdp_ram #(.WIDTH(DATA_W), .ADDR_W(EB_AW)) eb_ram (
    .clk(clk),
    .wr_en(eb_wr), .wr_addr(eb_wr_addr), .wr_data(eb_wr_data),
    .rd_en(eb_rd), .rd_addr(er_addr_reg), .rd_data(eb_rd_data)
);

// EB_READ alternates: a read goes out (er_issue), then its word is in. The
// first word is only held; each later one completes piece beat er_k - 1 =
// ({word, prev} >> 64), as the in-order pieces are formed.
/* verilator lint_off UNUSEDSIGNAL */
wire [2*DATA_W-1:0] e_pair = {eb_rd_data, er_prev_reg};
/* verilator lint_on UNUSEDSIGNAL */
wire [DATA_W-1:0]   e_shifted = e_pair[64 +: DATA_W];
wire                e_word = eb_state_reg == EB_READ && !er_issue_reg;
wire                e_first = er_k_reg == 16'd0;
wire                e_is_last = er_k_reg == e_ob_reg;
wire                out_adv_e = !me_valid_reg || m_early_tready;
reg  [DATA_W-1:0]   e_masked;                  // the last beat's octets past the ULPDU zeroed
integer mi;
always @(*) begin
    for (mi = 0; mi < N; mi = mi + 1) begin
        e_masked[8*mi +: 8] = e_shifted[8*mi +: 8] & {8{!e_is_last || e_lkeep_reg[mi]}};
    end
end
wire e_emit = e_word && !e_first && out_adv_e;
wire e_step = e_word && (e_first || out_adv_e);

always @(posedge clk) begin
    if (mx_valid_reg && m_exc_tready) begin
        mx_valid_reg <= 1'b0;
    end
    if (mp_valid_reg && m_axis_tready) begin
        mp_valid_reg <= 1'b0;
    end
    if (take0) begin
        h_data_reg <= s_axis_tdata;
        h_keep_reg <= s_axis_tkeep;
        h_last_reg <= s_axis_tlast;
        conn_reg <= s_axis_tuser[CONN_W+47:48];
        seq_reg <= s_axis_tuser[47:16];
        len_reg <= s_axis_tuser[15:0];
        state_reg <= S_LOOK;
    end
    if (look_go) begin
        ulen_reg <= look_ulen;
        ob_reg <= look_ob;
        lkeep_reg <= ~({N{1'b1}} << look_lk);
        j_reg <= 16'd1;
        early_reg <= early_go;
        if (early_go) begin
            field_reg <= field_next;
            eb_state_reg <= h_last_reg ? EB_WAIT : EB_FILL;
            e_seq_reg <= seq_reg;
            e_ulen_reg <= look_ulen;
            e_ob_reg <= look_ob;
            e_lkeep_reg <= ~({N{1'b1}} << look_lk);
            e_conn_reg <= conn_reg;
        end
        if (early_try && !early_go) begin
            sk_conn_reg <= conn_reg;
            sk_seq_reg <= seq_reg;
            sk_reason_reg <= early_fit ? 2'd1 : 2'd2;
        end
        if (look_take) begin
            field_reg <= field_next;
            state_reg <= h_last_reg ? S_FLUSH : S_PASS;
        end else begin
            mx_valid_reg <= 1'b1;
            mx_data_reg <= h_data_reg;
            mx_keep_reg <= h_keep_reg;
            mx_last_reg <= h_last_reg;
            mx_user_reg <= {conn_reg, seq_reg, len_reg, look_reason};
            state_reg <= h_last_reg ? S_IDLE : S_EXC;
        end
    end
    if (exc_go) begin
        mx_valid_reg <= 1'b1;
        mx_data_reg <= s_axis_tdata;
        mx_keep_reg <= s_axis_tkeep;
        mx_last_reg <= s_axis_tlast;
        if (s_axis_tlast) begin
            state_reg <= S_IDLE;
        end
        if (early_reg) begin
            field_reg <= field_next;
            j_reg <= j_reg + 16'd1;
            if (s_axis_tlast) begin
                eb_state_reg <= EB_WAIT;
            end
        end
    end
    if (pass_go) begin
        field_reg <= field_next;
        h_data_reg <= s_axis_tdata;
        j_reg <= j_reg + 16'd1;
        if (k_out < ob_reg) begin
            mp_valid_reg <= 1'b1;
            mp_data_reg <= shifted;
            mp_keep_reg <= k_is_last ? lkeep_reg : {N{1'b1}};
            mp_last_reg <= k_is_last;
            mp_user_reg <= {ulen_reg, conn_reg, 1'b1, k_is_last};
        end
        if (s_axis_tlast) begin
            state_reg <= j_reg < ob_reg ? S_FLUSH : S_IDLE;
        end
    end
    if (flush_go) begin
        mp_valid_reg <= 1'b1;
        mp_data_reg <= shifted;
        mp_keep_reg <= lkeep_reg;
        mp_last_reg <= 1'b1;
        mp_user_reg <= {ulen_reg, conn_reg, 2'b11};
        state_reg <= S_IDLE;
    end
    if (mp_valid_reg && m_axis_tready && mp_last_reg) begin
        pdone_reg <= pdone_reg + 5'd1;
    end
    if (v_valid_reg && m_verdict_tready) begin
        v_valid_reg <= 1'b0;
    end
    if (v_pop) begin
        v_valid_reg <= 1'b1;
        v_code_reg <= v_bad ? V_CRC : V_GOOD;
        v_conn_reg <= crc_tid;
        vdone_reg <= vdone_reg + 5'd1;
    end
    // The early buffer: the check, then the readout.
    if (e_pop) begin
        if (v_bad) begin
            eb_state_reg <= EB_IDLE;
        end else begin
            eb_state_reg <= EB_READ;
            er_issue_reg <= 1'b1;
            er_addr_reg <= {EB_AW{1'b0}};
            er_k_reg <= 16'd0;
        end
    end
    if (eb_rd) begin
        er_issue_reg <= 1'b0;
    end
    if (me_valid_reg && m_early_tready) begin
        me_valid_reg <= 1'b0;
    end
    if (e_step) begin
        er_prev_reg <= eb_rd_data;
        er_k_reg <= er_k_reg + 16'd1;
        er_addr_reg <= er_addr_reg + 1'b1;
        er_issue_reg <= 1'b1;
        if (!e_first && e_is_last) begin
            eb_state_reg <= EB_IDLE;
            er_issue_reg <= 1'b0;
        end
    end
    if (e_emit) begin
        me_valid_reg <= 1'b1;
        me_data_reg <= e_masked;
        me_keep_reg <= e_is_last ? e_lkeep_reg : {N{1'b1}};
        me_last_reg <= e_is_last;
        me_user_reg <= {e_seq_reg, e_ulen_reg, e_conn_reg};
    end
    sk_valid_reg <= 1'b0;
    if (look_go && early_try && !early_go) begin
        sk_valid_reg <= 1'b1;
    end
    if (fail_valid && !fail_hold_reg) begin
        fail_hold_reg <= 1'b1;
        fail_conn_reg <= fail_conn;
    end else if (!(v_pop && v_bad)) begin
        fail_hold_reg <= 1'b0;
    end
    if (rst) begin
        state_reg <= S_IDLE;
        mp_valid_reg <= 1'b0;
        mx_valid_reg <= 1'b0;
        v_valid_reg <= 1'b0;
        pdone_reg <= 5'd0;
        vdone_reg <= 5'd0;
        fail_hold_reg <= 1'b0;
        early_reg <= 1'b0;
        eb_state_reg <= EB_IDLE;
        er_issue_reg <= 1'b0;
        me_valid_reg <= 1'b0;
        sk_valid_reg <= 1'b0;
    end
end

assign m_axis_tdata = mp_data_reg;
assign m_axis_tkeep = mp_keep_reg;
assign m_axis_tvalid = mp_valid_reg;
assign m_axis_tlast = mp_last_reg;
assign m_axis_tuser = mp_user_reg;
assign m_verdict_tdata = v_code_reg;
assign m_verdict_tvalid = v_valid_reg;
assign m_verdict_tuser = v_conn_reg;
assign m_exc_tdata = mx_data_reg;
assign m_exc_tkeep = mx_keep_reg;
assign m_exc_tvalid = mx_valid_reg;
assign m_exc_tlast = mx_last_reg;
assign m_exc_tuser = mx_user_reg;
assign m_early_tdata = me_data_reg;
assign m_early_tkeep = me_keep_reg;
assign m_early_tvalid = me_valid_reg;
assign m_early_tlast = me_last_reg;
assign m_early_tuser = me_user_reg;
assign m_skip_valid = sk_valid_reg;
assign m_skip_conn = sk_conn_reg;
assign m_skip_seq = sk_seq_reg;
assign m_skip_reason = sk_reason_reg;
assign early_busy = eb_state_reg != EB_IDLE || me_valid_reg;

endmodule

`resetall
