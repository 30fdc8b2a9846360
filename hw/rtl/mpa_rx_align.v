// mpa_rx_align: the intake of the MPA receive path. Takes TCP segment
// payloads of many connections, decides per segment whether it continues
// its connection's in-order stream, and hands the new octets on as whole
// 32-bit words in stream-aligned beats; every other segment goes, whole and
// untouched, to the exception stream with a reason code.
//
// Stream alignment. Octet s of a connection's stream (s = TCP sequence
// number minus the marker base, RFC 5044 4.3) sits in lane s mod N of
// output beat s div N (N = DATA_W/8). MPA's units all start at multiples of
// 4 octets from the base (FPDUs are multiples of 4, markers are 4 octets
// every 512), so in this view every FPDU starts at a word boundary and every
// marker fills word 0 of a beat whose stream offset is a multiple of 512:
// the delineator behind this block (mpa_rx_walk) works on words and never
// shifts data. Octets of a word the segment does not complete are kept per
// connection (up to 3, the "stash") and completed by the next in-order
// segment; nothing is handed on before its word is whole.
//
// Per-connection state (an sdp_ram of 2^CONN_W entries): enabled, markers
// and CRC on, the marker base mod 512, the next expected sequence number
// (rcv_nxt) and the stash; an error bit in a second table, set through
// err_* (by the verdicts) and cleared by configuring the connection.
//
// Classification of a segment [seq, seq+len) against rcv_nxt, in this
// order (sequence arithmetic mod 2^32):
//   exception 1  connection not enabled
//   exception 2  connection in error (an FPDU failed its CRC or markers)
//   exception 5  len = 0
//   exception 3  out of order: seq after rcv_nxt (a hole before it)
//   exception 4  duplicate: seq+len at or before rcv_nxt (nothing new)
//   accepted     seq <= rcv_nxt < seq+len: the octets before rcv_nxt are
//                skipped (an overlap never overwrites what came first,
//                the stash included) and rcv_nxt becomes seq+len.
//
// Input s_axis: one frame per segment, lane-0 aligned, every beat full but
// the last, exactly ceil(len/N) beats; tkeep is not looked at. tuser =
// {conn, seq[31:0], len[15:0]}, read on the first beat.
// cfg_*: (re)starts a connection with its marker base (the sequence number
// of the first FPDU octet, which is also where its markers start), markers
// and CRC on or off; clears its error. cfg_ready is high only between
// segments. Configure a connection while none of its segments is in the
// block.
// m_cont (first beats only): the segment is of the connection of the beat
// before it on m_* (which ended the segment before: accepted segments of a
// connection continue its stream, so this one goes on from that beat's
// end, in it when the beat ends inside a stream beat: m_wlo = its m_whi).
// m_hint: high for the clock after an accepted segment's classification,
// with m_hint_conn its connection, before its first output beat.
// Output m_*: one beat per stream beat that holds at least one new whole
// word: words [m_wlo, m_whi) of m_data are valid; m_mk says word 0 of this
// beat is a marker position (markers on and stream offset a multiple of
// 512) and is in the beat (m_wlo = 0: a segment that starts past it does
// not have it); m_first/m_last mark the segment's first and last output beat; a
// segment that completes no word has none. A segment joined to the one
// before (below) has neither: its beats go on from that one's, as if the
// two had come as one. m_mrk_en, m_crc_en, m_conn are the segment's.
// Exceptions m_exc_*: the segment's frame as it came in, tuser = {conn,
// seq, len, reason[2:0]}.
//
// Lookahead: s_axis goes through a four-beat input FIFO (in_* .. in3_*),
// which takes a beat while fewer than four are in (s_axis_tready comes
// from registers). The table is read at the edge where a segment's first
// beat enters it, while the segment before may still be streaming; a
// table write that lands at that edge or later (the segment before ends,
// cfg, err) and concerns the same connection is kept beside the word read
// (the patch) and used instead of the RAM's. The lookup's sums (c_*) are
// made over the next clock, into registers, for each of the three words
// the classification may use (the one the segment before writes as it
// ends, the patch, the RAM's), so that the classification only picks
// them: from the second edge after the first beat came in, on the clock
// the one before takes its last output beat (or its exception frame its
// last beat), with the word that beat writes when the connection is the
// same, or on an idle clock (not on the clock after a patch write: the
// patch's sums are a clock behind it). One first beat at a time waits to
// be classified: a second waits on s_axis (so the sums of the word a
// segment writes as it ends are never used before they are made).
//
// Joining. A segment whose octets straddle one stream beat more than it
// arrived in ends with a beat that takes no input: its last octets, carried
// from its last input beat. When the next segment is already in, of the
// same connection, starts exactly at this one's end (the common case of
// back-to-back in-order traffic) and is accepted, it is joined instead: it
// starts on that clock, its first output beat carrying both segments'
// octets of the stream beat they share, so that the stream costs no clock
// more than it arrived in. (The two share that beat's lanes at the end's
// position: this one's below it, the next one's from it.) A segment that
// ends inside a beat it took input for is joined alike: its last output
// beat is not handed on but kept, and the next one's first output beat is
// it, completed (the stream beat is not handed on twice, which costs
// mpa_rx_walk a clock when an FPDU goes on across the two). Not joined,
// the segment ends as before and the next one's first output beat is that
// stream beat again, from its first new word (m_cont).
//
// Throughput: one output beat per clock, plus one per segment whose octets
// straddle one more beat than they arrived in and that the next one is not
// joined to: the next is another connection's, leaves a hole or overlaps,
// or comes in too late to be classified by then; the segment is of one
// input beat; or the shared beat holds the segment's first new word, or
// no whole word with the next one's octets. A segment of three input
// beats or more starts right behind the one before (the FIFO lets its
// first beat in three clocks before the one before ends); a shorter one
// costs up to two clocks more (segments of one beat: one every three
// clocks). Latency: 4 clocks from a segment's first beat on s_axis to its
// first output beat.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mpa_rx_align #(
    parameter DATA_W = 64,
    parameter CONN_W = 10
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire                    cfg_valid,
    output wire                    cfg_ready,
    input  wire [CONN_W-1:0]       cfg_conn,
    input  wire                    cfg_en,
    input  wire                    cfg_mrk_en,
    input  wire                    cfg_crc_en,
    input  wire [31:0]             cfg_base,

    input  wire                    err_valid,
    input  wire [CONN_W-1:0]       err_conn,

    input  wire [DATA_W-1:0]       s_axis_tdata,
    input  wire [DATA_W/8-1:0]     s_axis_tkeep,
    input  wire                    s_axis_tvalid,
    output wire                    s_axis_tready,
    input  wire                    s_axis_tlast,
    input  wire [CONN_W+47:0]      s_axis_tuser,

    output reg  [DATA_W-1:0]       m_data,
    output reg                     m_valid,
    input  wire                    m_ready,
    output reg  [CONN_W-1:0]       m_conn,
    output reg                     m_first,
    // (first beats) the segment continues the connection of the beat
    // before it on m_*: that beat ended the segment before, and this one
    // goes on from its end (mpa_rx_walk walks the two as one)
    output reg                     m_cont,
    output reg                     m_last,
    output reg  [$clog2(DATA_W/32):0] m_wlo,
    output reg  [$clog2(DATA_W/32):0] m_whi,
    output reg                     m_mk,
    output reg                     m_mrk_en,
    output reg                     m_crc_en,
    // one clock's notice of the connection of the segment whose beats come
    // next on m_* (accepted: it may still make none), for the delineator's
    // table read
    output reg                     m_hint,
    output wire [CONN_W-1:0]       m_hint_conn,

    output wire [DATA_W-1:0]       m_exc_tdata,
    output wire [DATA_W/8-1:0]     m_exc_tkeep,
    output wire                    m_exc_tvalid,
    input  wire                    m_exc_tready,
    output wire                    m_exc_tlast,
    output wire [CONN_W+50:0]      m_exc_tuser
);

localparam N = DATA_W / 8;
localparam LN = $clog2(N);
localparam WORDS = DATA_W / 32;
localparam WL = $clog2(WORDS) + 1;   // a word count 0 .. WORDS
localparam PH_W = 9 - LN;            // beat index within a marker interval
localparam ST_W = 1 + 1 + 1 + 9 + 32 + 24;
localparam [17:0] N18 = {{(17 - LN){1'b0}}, 1'b1, {LN{1'b0}}};

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("mpa_rx_align: DATA_W must be 64, 128, 256 or 512, not %0d", DATA_W);
        $finish;
    end
end

// S_IDLE: the input register holds the next segment's first beat (or
// nothing); its table word is ready, and the clock classifies it.
localparam [2:0] S_IDLE = 3'd0, S_STREAM = 3'd2, S_EXC = 3'd3;

reg [2:0] state_reg;

// ---- tables -----------------------------------------------------------------
// st: {en, mrk_en, crc_en, base[8:0], rcv_nxt[31:0], stash[23:0]}

wire [CONN_W-1:0] s_conn = s_axis_tuser[CONN_W+47:48];
wire [31:0]       s_seq  = s_axis_tuser[47:16];
wire [15:0]       s_len  = s_axis_tuser[15:0];

// ---- input register and the lookahead ------------------------------------------

reg              in_valid;             // the FIFO's head
reg [DATA_W-1:0] in_data;
reg [N-1:0]      in_keep;
reg              in_last;
reg              in1_valid;            // the beats behind it
reg [DATA_W-1:0] in1_data;
reg [N-1:0]      in1_keep;
reg              in1_last;
reg              in2_valid;
reg [DATA_W-1:0] in2_data;
reg [N-1:0]      in2_keep;
reg              in2_last;
reg              in3_valid;
reg [DATA_W-1:0] in3_data;
reg [N-1:0]      in3_keep;
reg              in3_last;
wire             in_take;
reg              s_first_reg;          // the next s_axis beat starts a segment
reg              hd_pend;              // a first beat in the FIFO waits to be classified
reg              hd_same;              // ... of the connection of the segment streaming, while
                                       // it streams (cleared as it ends): the word it
                                       // writes as it ends is the one to classify with
reg              hd_rdy;               // ... and came in before the last edge (see c_*)

// The segment whose first beat is in the input register (or was: these
// hold until the next first beat comes in).
reg [CONN_W-1:0] hd_conn;
reg [31:0]       hd_seq, hd_end;
reg [15:0]       hd_len;
// Worked out from s_axis_tuser as the first beat comes in, for the sums
// on the table words: len's beats (lh = len div N) plus 1 and 2, whether
// lh is 0 or 1, len mod N not 0, len 0, and (seq div N) - 1 (18 bits).
localparam LHW = 16 - LN;
localparam SHW = 18 - LN;
reg [LHW:0]      hd_lhp1, hd_lhp2;        // (with their carries: len up to 65535)
reg              hd_lh0, hd_lh1, hd_llnz, hd_len0;
reg [SHW-1:0]    hd_shm1;
reg [LN:0]       hd_llsl;                // (len mod N) + (seq mod N)
// Their sums, each an rnic_add (a tree, no carry chain).
wire [31:0]      s_end;
wire [LHW-1:0]   s_lhp1, s_lhp2;
wire             s_lhp1_c, s_lhp2_c;
wire [SHW-1:0]   s_shm1;
wire [LN-1:0]    s_llsl;
wire             s_llsl_c;
/* verilator lint_off PINCONNECTEMPTY */
rnic_add #(.W(32))  add_end (.a(s_seq), .b({16'd0, s_len}), .ci(1'b0), .s(s_end), .co());
rnic_add #(.W(LHW)) add_lhp1 (.a(s_len[15:LN]), .b({LHW{1'b0}}), .ci(1'b1), .s(s_lhp1), .co(s_lhp1_c));
rnic_add #(.W(LHW)) add_lhp2 (.a(s_len[15:LN]), .b({{(LHW-1){1'b0}}, 1'b1}), .ci(1'b1), .s(s_lhp2), .co(s_lhp2_c));
rnic_add #(.W(SHW)) add_shm1 (.a(s_seq[17:LN]), .b({SHW{1'b1}}), .ci(1'b0), .s(s_shm1), .co());
/* verilator lint_on PINCONNECTEMPTY */
rnic_add #(.W(LN))  add_llsl (.a(s_len[LN-1:0]), .b(s_seq[LN-1:0]), .ci(1'b0), .s(s_llsl), .co(s_llsl_c));

wire s_fire = s_axis_tvalid && s_axis_tready;
wire look_start = s_fire && s_first_reg;   // read the tables for it

wire cfg_fire = cfg_valid && cfg_ready;
wire classify;
wire seg_join;                             // the next segment is joined to this one (see "Joining")
wire seg_join_last;                        // ... on its last beat, which the two share
wire load_seg = classify || seg_join;      // (seg_join_last is a classify)
wire any_join = seg_join || seg_join_last;
wire seg_done;                             // the streaming segment's last output beat

wire             st_wr_en;
wire [ST_W-1:0]  st_wr_data;
wire [CONN_W-1:0] st_wr_addr;
wire [ST_W-1:0]  st_rd;

sdp_ram #(.WIDTH(ST_W), .ADDR_W(CONN_W)) st_ram (
    .clk(clk),
    .wr_en(st_wr_en), .wr_addr(st_wr_addr), .wr_data(st_wr_data),
    .rd_en(look_start), .rd_addr(s_conn), .rd_data(st_rd)
);

wire              err_wr_en = err_valid || cfg_fire;
wire [CONN_W-1:0] err_wr_addr = err_valid ? err_conn : cfg_conn;
wire err_rd;
sdp_ram #(.WIDTH(1), .ADDR_W(CONN_W)) err_ram (
    .clk(clk),
    .wr_en(err_wr_en), .wr_addr(err_wr_addr),
    .wr_data(err_valid),
    .rd_en(look_start), .rd_addr(s_conn), .rd_data(err_rd)
);

// The patch: the newest write to the looked-up connection since its read
// (a read and a write at one edge return the old word).
reg              st_pv, err_pv;
reg              pt_stale_reg = 1'b0;   // the patch was written at the last edge
reg [ST_W-1:0]   st_patch;
reg              err_patch;
// (Compared with both candidates, then chosen: look_start comes late.)
wire st_pt  = look_start ? st_wr_addr == s_conn : st_wr_addr == hd_conn;
wire err_pt = look_start ? err_wr_addr == s_conn : err_wr_addr == hd_conn;
always @(posedge clk) begin
    if (look_start) begin
        st_pv <= 1'b0;
        err_pv <= 1'b0;
    end
    pt_stale_reg <= st_wr_en && st_pt;
    if (st_wr_en && st_pt) begin
        st_pv <= 1'b1;
        st_patch <= st_wr_data;
    end
    if (err_wr_en && err_pt) begin
        err_pv <= 1'b1;
        err_patch <= err_valid;
    end
end
wire [ST_W-1:0] st_now = st_pv ? st_patch : st_rd;
wire            err_now = err_pv ? err_patch : err_rd;
// A segment is also classified on the clock of the segment before's last
// output beat, with the word that beat writes for the same connection.
wire            fw_same;
wire [ST_W-1:0] st_fw;
wire [ST_W-1:0] st_cls = fw_same ? st_fw : st_now;

// cfg writes only between segments, and not when an error is being set
// (the error table has one write port).
assign cfg_ready = state_reg == S_IDLE && !err_valid;

// ---- segment registers --------------------------------------------------------

reg [CONN_W-1:0] conn_reg;
reg [31:0]       seq_reg;
reg [15:0]       len_reg;
reg [2:0]        reason_reg;
reg              mrk_reg, crc_reg;
reg [8:0]        base_reg;
reg [31:0]       end_reg;                // seq + len
reg [23:0]       stash_reg;
reg [1:0]        stash_n_reg;            // stash octets, (rcv_nxt - base) mod 4
reg [LN-1:0]     rot_reg;                // (seq - base) mod N
reg [3*LN-1:0]   sidx_reg;               // input lanes of the stash's octets (see stash_new)
reg [17:0]       lo_rem_reg, hi_rem_reg; // octets from this beat to lo, hi
reg [17:0]       in_left_reg;            // input beats still to take
reg [17:0]       out_left_reg;           // output beats still to make
reg              need_in_reg;            // in_left_reg != 0
reg              final_reg;              // out_left_reg == 1
reg [PH_W-1:0]   phase_reg;              // beat index mod 512/N
reg              emitted_reg;
reg              em_ok_reg = 1'b0;       // m_conn is the last beat's (none since reset or cfg: no)
reg [DATA_W-1:0] prev_rot_reg;
reg              xtra_reg;               // one output beat more than input beats
reg              pen_reg;                // the next step takes the last input beat, a beat
                                         // without input follows, and lo is at or before it
reg              fin_ok_reg;             // the next step is the last, takes input, holds a
                                         // whole word and less than a beat, and lo is before it

// ---- lookup: classify --------------------------------------------------------

wire        st_en   = st_cls[ST_W-1];
wire        st_mrk  = st_cls[ST_W-2];
wire        st_crc  = st_cls[ST_W-3];
wire [8:0]  st_base = st_cls[ST_W-4 -: 9];
wire [23:0] st_stash = st_cls[23:0];


// after31(a, b, ge_ab, ge_ba): a comes after b in sequence arithmetic
// (0 < a - b < 2^31), from the top six bits of each and the low 26 bits' a >= b and
// b >= a.
function after31(input [5:0] a, input [5:0] b, input ge_ab, input ge_ba);
    reg gt_ab, gt_ba, eq;
    begin
        gt_ab = a[4:0] > b[4:0];
        gt_ba = b[4:0] > a[4:0];
        eq = a[4:0] == b[4:0];
        // a[30:0] > b[30:0] is !(b >= a) on 31 bits, and the reverse
        after31 = a[5] == b[5] ? !(gt_ba || (eq && ge_ba)) : !(gt_ab || (eq && ge_ab));
    end
endfunction

// The lookup's sums, c_*: worked out a clock ahead, into registers, for
// each word the classification may use: the one the segment before
// writes as it ends (its registers: source 0), the patch (1) and the
// RAM's (2). They hold from the second edge after the segment's first beat
// came in (hd_rdy; the RAM's word and hd_* are in from the first), and,
// for the patch, from the second edge after its last write (pt_stale);
// the classification waits for that.
//   ooo  a hole before the segment: seq after rcv_nxt
//   nw   something new: seq + len after rcv_nxt (else a duplicate)
//   rot  (seq - base) mod N; ph, (seq - base) mod 512 div N
//   nn   the stash's octets, (rcv_nxt - base) mod 4
//   lo   octets from the first beat to the first new one (the stash's
//        word), rounded down to a word: skip + rot = rcv_nxt - f, f the
//        stream beat's start at or below seq ({seq div N, base mod N} or
//        one beat lower), mod 2^18
//   hi   octets from the first beat to the segment's end, rounded down to
//        a word: len + rot
//   ob   output beats, ceil((len + rot) / N); ob1: ob is 1
genvar g;
/* verilator lint_off PINCONNECTEMPTY */
/* verilator lint_off UNUSEDSIGNAL */
wire [ST_W-1:0] c_word [0:2];
assign c_word[0] = {1'b1, mrk_reg, crc_reg, base_reg, end_reg, 24'd0};
assign c_word[1] = st_patch;
assign c_word[2] = st_rd;
reg [2:0]        c_ooo, c_nw, c_ob1, c_xt, c_hw;
reg              c_ex0;                  // seq is the segment before's end (source 0)
reg [LN-1:0]     c_rot [0:2];
reg [PH_W-1:0]   c_ph [0:2];
reg [1:0]        c_nn [0:2];
reg [17:0]       c_lo [0:2];
reg [17:0]       c_hi [0:2];
reg [17:0]       c_ob [0:2];
reg [3*LN-1:0]   c_sidx [0:2];
generate
    for (g = 0; g < 3; g = g + 1) begin : cw
        wire [31:0]   nxt  = c_word[g][55:24];
        wire [8:0]    cbase = c_word[g][ST_W-4 -: 9];
        // Whether seq, and seq + len, come after rcv_nxt: from the low 31
        // bits' a >= b both ways: bits 25..0 by the carry out of
        // a + ~b + 1 (an rnic_add of 27 positions: 3 levels), bits 30..26
        // compared apart, and the two put together with the top bits in
        // one LUT (after31).
        wire ge_sn, ge_ns, ge_en, ge_ne;
        rnic_add #(.W(26)) a_sn (.a(hd_seq[25:0]), .b(~nxt[25:0]), .ci(1'b1), .s(), .co(ge_sn));
        rnic_add #(.W(26)) a_ns (.a(nxt[25:0]), .b(~hd_seq[25:0]), .ci(1'b1), .s(), .co(ge_ns));
        rnic_add #(.W(26)) a_en (.a(hd_end[25:0]), .b(~nxt[25:0]), .ci(1'b1), .s(), .co(ge_en));
        rnic_add #(.W(26)) a_ne (.a(nxt[25:0]), .b(~hd_end[25:0]), .ci(1'b1), .s(), .co(ge_ne));
        // (seq - cbase) mod 512, and mod N (crot; bs: seq mod N < cbase mod N)
        wire [8:0]    coff9;
        wire [LN-1:0] crot;
        wire          crot_c;
        rnic_add #(.W(9))  a_off (.a(hd_seq[8:0]), .b(~cbase), .ci(1'b1), .s(coff9), .co());
        rnic_add #(.W(LN)) a_rot (.a(hd_seq[LN-1:0]), .b(~cbase[LN-1:0]), .ci(1'b1), .s(crot), .co(crot_c));
        wire          bs   = !crot_c;
        // len + crot = y - (cbase mod N) + (bs ? N : 0), y = hd_llsl: its low
        // bits are y's low bits minus cbase's, mod N; it reaches N (cy) when
        // y >= cbase mod N (bs), or y >= N + cbase mod N.
        wire [LN-1:0] hlo;
        wire          ge_y;             // y mod N >= cbase mod N
        rnic_add #(.W(LN)) a_hl (.a(hd_llsl[LN-1:0]), .b(~cbase[LN-1:0]), .ci(1'b1), .s(hlo), .co(ge_y));
        wire          cy   = bs ? hd_llsl[LN] || ge_y : hd_llsl[LN] && ge_y;
        wire          hnz  = hd_llsl[LN-1:0] != cbase[LN-1:0];
        // rcv_nxt - f, f = {seq div N, cbase mod N} (bs: one beat lower)
        wire [17:0]   lo0, lo1;
        rnic_add #(.W(18)) a_lo0 (.a(nxt[17:0]), .b(~{hd_seq[17:LN], cbase[LN-1:0]}), .ci(1'b1), .s(lo0), .co());
        rnic_add #(.W(18)) a_lo1 (.a(nxt[17:0]), .b(~{hd_shm1, cbase[LN-1:0]}), .ci(1'b1), .s(lo1), .co());
        always @(posedge clk) begin
            c_ooo[g] <= after31(hd_seq[31:26], nxt[31:26], ge_sn, ge_ns);
            c_nw[g] <= after31(hd_end[31:26], nxt[31:26], ge_en, ge_ne);
            c_rot[g] <= crot;
            c_ph[g] <= coff9[8:LN];
            c_nn[g] <= nxt[1:0] - cbase[1:0];
            c_lo[g] <= {bs ? lo1[17:2] : lo0[17:2], 2'b00};
            c_hi[g] <= {1'b0, cy ? hd_lhp1 : {1'b0, hd_len[15:LN]}, hlo[LN-1:2], 2'b00};
            c_hw[g] <= (cy ? hd_lhp1 : {1'b0, hd_len[15:LN]}) != {(LHW+1){1'b0}} || hlo[LN-1:2] != {(LN-2){1'b0}};
            c_ob[g] <= {{(17-LHW){1'b0}}, cy && hnz ? hd_lhp2 : (cy || hnz) ? hd_lhp1 : {1'b0, hd_len[15:LN]}};
            c_ob1[g] <= hd_lh0 ? cy ^ hnz : hd_lh1 && !cy && !hnz;
            // one output beat more than input beats (ob against in_beats)
            c_xt[g] <= (cy && hnz) || ((cy ^ hnz) && !hd_llnz);
            // The input lanes of the stash's octets (see stash_new):
            // (4 (hlo div 4) + k - crot) mod N = (len - hlo mod 4 + k) mod N.
            c_sidx[g] <= {hd_len[LN-1:0] - {{(LN-2){1'b0}}, hlo[1:0]} + {{(LN-2){1'b0}}, 2'd2},
                          hd_len[LN-1:0] - {{(LN-2){1'b0}}, hlo[1:0]} + {{(LN-2){1'b0}}, 2'd1},
                          hd_len[LN-1:0] - {{(LN-2){1'b0}}, hlo[1:0]}};
        end
    end
endgenerate
always @(posedge clk) begin
    c_ex0 <= hd_seq == end_reg;
end
/* verilator lint_on UNUSEDSIGNAL */
/* verilator lint_on PINCONNECTEMPTY */
// The word the classification uses: 0 the one being written, 1 the patch,
// 2 the RAM's.
wire [1:0]  csel = fw_same ? 2'd0 : st_pv ? 2'd1 : 2'd2;
wire        pt_wait;           // the patch's sums are not in yet
wire        is_ooo  = c_ooo[csel];
wire        is_dup  = !c_nw[csel];
wire [LN-1:0] rot   = c_rot[csel];
wire [2:0]  look_reason =
    !st_en     ? 3'd1 :
    err_now    ? 3'd2 :
    hd_len0    ? 3'd5 :
    is_ooo     ? 3'd3 :
    is_dup     ? 3'd4 : 3'd0;
wire [1:0]  nxt_n   = c_nn[csel];
wire [17:0] out_beats = c_ob[csel];              // beats the octets straddle
wire [17:0] in_beats = {{(1+LN){1'b0}}, hd_llnz ? hd_lhp1 : {1'b0, hd_len[15:LN]}};   // beats the segment arrives in

// ---- streaming: one output beat a clock ----------------------------------------

wire out_adv = !m_valid || m_ready;
wire need_in = need_in_reg;
wire step = state_reg == S_STREAM && out_adv && (!need_in || in_valid);

// The input beat rotated up by rot: lane L gets input lane (L - rot) mod N,
// an N-way mux over rot of the lanes in that order, built as 4-way muxes
// on two bits of rot each (kept apart: one LUT level each).
wire [DATA_W-1:0] rot_in;
generate
    for (g = 0; g < N; g = g + 1) begin : rl
        wire [DATA_W-1:0] perm;
        genvar r;
        for (r = 0; r < N; r = r + 1) begin : by
            assign perm[8*r +: 8] = in_data[8*((g - r + N) % N) +: 8];
        end
        // rot[1:0]
        (* keep *) wire [2*N-1:0] m1;
        for (r = 0; r < N / 4; r = r + 1) begin : q1
            assign m1[8*r +: 8] = rot_reg[1] ? (rot_reg[0] ? perm[32*r + 24 +: 8] : perm[32*r + 16 +: 8])
                                             : (rot_reg[0] ? perm[32*r + 8 +: 8] : perm[32*r +: 8]);
        end
        wire [7:0] pick;
        if (LN == 3) begin : w64
            assign pick = rot_reg[2] ? m1[15:8] : m1[7:0];
        end else begin : wide
            // rot[3:2]
            (* keep *) wire [N/2-1:0] m2;
            for (r = 0; r < N / 16; r = r + 1) begin : q2
                assign m2[8*r +: 8] = rot_reg[3] ? (rot_reg[2] ? m1[32*r + 24 +: 8] : m1[32*r + 16 +: 8])
                                                 : (rot_reg[2] ? m1[32*r + 8 +: 8] : m1[32*r +: 8]);
            end
            if (LN == 4) begin : w128
                assign pick = m2[7:0];
            end else if (LN == 5) begin : w256
                assign pick = rot_reg[4] ? m2[15:8] : m2[7:0];
            end else begin : w512
                assign pick = rot_reg[5] ? (rot_reg[4] ? m2[31:24] : m2[23:16])
                                         : (rot_reg[4] ? m2[15:8] : m2[7:0]);
            end
        end
        assign rot_in[8*g +: 8] = need_in ? pick : 8'd0;
    end
endgenerate

// Word range of this beat, the stash merged into the word at lo, and the
// stash after the segment: the octets of the word at hi (the first one not
// whole), used when the last output beat is made.
wire lo_here = !lo_rem_reg[17] && lo_rem_reg < N18;
wire [31:0] stash32 = {8'd0, stash_reg};
wire [DATA_W-1:0] merged;
wire [DATA_W-1:0] last_beat;             // merged without the stash (seg_join_last)
wire [23:0] stash_new;
wire [WL-1:0] wlo = (lo_rem_reg[17] || lo_rem_reg == 18'd0) ? {WL{1'b0}} :
                    (lo_rem_reg >= N18) ? WORDS[WL-1:0] : lo_rem_reg[WL+1:2];
wire [WL-1:0] whi = (hi_rem_reg[17] || hi_rem_reg < 18'd4) ? {WL{1'b0}} :
                    (hi_rem_reg >= N18) ? WORDS[WL-1:0] : hi_rem_reg[WL+1:2];
generate
    for (g = 0; g < N; g = g + 1) begin : lane
        localparam [LN-1:0] LANE = g;
        wire stashed;
        wire carried;
        if (g % 4 == 3) begin : no_stash
            assign stashed = 1'b0;
        end else begin : may_stash
            assign stashed = lo_here && lo_rem_reg[LN-1:2] == LANE[LN-1:2] &&
                             stash_n_reg > LANE[1:0];
        end
        if (g == N - 1) begin : no_carry
            assign carried = 1'b0;
        end else begin : may_carry
            assign carried = rot_reg > LANE;
        end
        assign merged[8*g +: 8] = stashed ? stash32[8*(g % 4) +: 8] :
                                  carried ? prev_rot_reg[8*g +: 8] : rot_in[8*g +: 8];
        assign last_beat[8*g +: 8] = carried ? prev_rot_reg[8*g +: 8] : rot_in[8*g +: 8];
    end
    // The stash after the segment: octets 0..2 of merged's word at hi,
    // lane L = 4 hi + k, picked before the merge rather than from it
    // (merged is 4 LUT levels deep, a 16-way word pick 2 more): the old
    // stash's octet, prev_rot_reg's (a 16-way pick by hi, a register) or
    // the input's lane (L - rot) mod N (sidx_reg, made in the lookup's
    // sums: a 64-way pick by a register), chosen as merged chooses.
    for (g = 0; g < 3; g = g + 1) begin : keep
        wire [7:0] pw [0:WORDS-1];
        wire [7:0] iw;
        genvar k, b;
        for (k = 0; k < WORDS; k = k + 1) begin : word
            assign pw[k] = prev_rot_reg[32*k + 8*g +: 8];
        end
        // (the input lane's octet bit by bit through rnic_pick: a kept
        // tree of 4-way picks, 3 levels at N = 64 where in_data's octet
        // by a lane index mapped in 4)
        for (b = 0; b < 8; b = b + 1) begin : bit_in
            wire [N-1:0] col;
            for (k = 0; k < N; k = k + 1) begin : lane_in
                assign col[k] = in_data[8*k + b];
            end
            rnic_pick #(.AW(LN)) pick (.v(col), .a(sidx_reg[LN*g +: LN]), .y(iw[b]));
        end
        localparam [1:0] K = g;
        wire [LN-1:0] hl = {hi_rem_reg[LN-1:2], K};
        wire s_st = lo_here && lo_rem_reg[LN-1:2] == hi_rem_reg[LN-1:2] && stash_n_reg > K;
        wire s_ca = rot_reg > hl;
        assign stash_new[8*g +: 8] = s_st ? stash32[8*g +: 8] :
                                     s_ca ? pw[hi_rem_reg[LN-1:2]] :
                                     need_in ? iw : 8'd0;
    end
endgenerate

wire emit = whi > wlo;

// The counters' steps, each an rnic_add (no carry chain): in_left - 1,
// out_left - 1, and lo_rem, hi_rem - N (their bits above LN).
wire [17:0]     in_left_m1, out_left_m1;
wire [17-LN:0]  lo_rem_mn, hi_rem_mn;
/* verilator lint_off PINCONNECTEMPTY */
rnic_add #(.W(18))    add_inl (.a(in_left_reg), .b({18{1'b1}}), .ci(1'b0), .s(in_left_m1), .co());
rnic_add #(.W(18))    add_outl (.a(out_left_reg), .b({18{1'b1}}), .ci(1'b0), .s(out_left_m1), .co());
rnic_add #(.W(18-LN)) add_lor (.a(lo_rem_reg[17:LN]), .b({(18-LN){1'b1}}), .ci(1'b0), .s(lo_rem_mn), .co());
rnic_add #(.W(18-LN)) add_hir (.a(hi_rem_reg[17:LN]), .b({(18-LN){1'b1}}), .ci(1'b0), .s(hi_rem_mn), .co());
/* verilator lint_on PINCONNECTEMPTY */
wire final_beat = final_reg;

// ---- exceptions: the frame passes through ---------------------------------------

assign m_exc_tdata  = in_data;
assign m_exc_tkeep  = in_keep;
assign m_exc_tlast  = in_last;
assign m_exc_tvalid = state_reg == S_EXC && in_valid;
assign m_exc_tuser  = {conn_reg, seq_reg, len_reg, reason_reg};
assign m_hint_conn  = conn_reg;

wire exc_done = state_reg == S_EXC && in_valid && m_exc_tready && in_last;
assign in_take = (state_reg == S_EXC && in_valid && m_exc_tready) || (step && need_in);
// Four beats of input FIFO, taken while fewer than four are in: s_axis_tready
// comes from registers, and a segment's first beat comes in far enough
// ahead of the one before's end for its lookup (two clocks, c_*) to be done
// by then in back-to-back streaming.
assign s_axis_tready = !in3_valid && !(s_first_reg && hd_pend);
// The FIFO's slots still full after this clock's take; a beat coming in
// goes into the first free one.
wire o0 = in_take ? in1_valid : in_valid;
wire o1 = in_take ? in2_valid : in1_valid;
wire o2 = in_take ? in3_valid : in2_valid;

always @(posedge clk) begin
    if (in_take) begin
        in_valid <= in1_valid;
        in_data <= in1_data;
        in_keep <= in1_keep;
        in_last <= in1_last;
        in1_valid <= in2_valid;
        in1_data <= in2_data;
        in1_keep <= in2_keep;
        in1_last <= in2_last;
        in2_valid <= in3_valid;
        in2_data <= in3_data;
        in2_keep <= in3_keep;
        in2_last <= in3_last;
        in3_valid <= 1'b0;
    end
    if (s_fire) begin
        if (!o0) begin
            in_valid <= 1'b1;
            in_data <= s_axis_tdata;
            in_keep <= s_axis_tkeep;
            in_last <= s_axis_tlast;
        end else if (!o1) begin
            in1_valid <= 1'b1;
            in1_data <= s_axis_tdata;
            in1_keep <= s_axis_tkeep;
            in1_last <= s_axis_tlast;
        end else if (!o2) begin
            in2_valid <= 1'b1;
            in2_data <= s_axis_tdata;
            in2_keep <= s_axis_tkeep;
            in2_last <= s_axis_tlast;
        end else begin
            in3_valid <= 1'b1;
            in3_data <= s_axis_tdata;
            in3_keep <= s_axis_tkeep;
            in3_last <= s_axis_tlast;
        end
        s_first_reg <= s_axis_tlast;
    end
    hd_rdy <= !look_start;
    if (seg_done) begin
        hd_same <= 1'b0;
    end
    if (look_start) begin
        hd_pend <= 1'b1;
        // (look_start never meets classify: conn_reg is the segment's.)
        hd_same <= s_conn == conn_reg && state_reg == S_STREAM && !seg_done;
        hd_conn <= s_conn;
        hd_seq <= s_seq;
        hd_len <= s_len;
        hd_end <= s_end;
        hd_lhp1 <= {s_lhp1_c, s_lhp1};
        hd_lhp2 <= {s_lhp2_c, s_lhp2};
        hd_llsl <= {s_llsl_c, s_llsl};
        hd_lh0 <= s_len[15:LN] == {LHW{1'b0}};
        hd_lh1 <= s_len[15:LN] == {{(LHW-1){1'b0}}, 1'b1};
        hd_llnz <= s_len[LN-1:0] != {LN{1'b0}};
        hd_len0 <= s_len == 16'd0;
        hd_shm1 <= s_shm1;
    end
    if (load_seg) begin
        hd_pend <= 1'b0;
    end
    if (rst) begin
        in_valid <= 1'b0;
        in1_valid <= 1'b0;
        in2_valid <= 1'b0;
        in3_valid <= 1'b0;
        hd_pend <= 1'b0;
        s_first_reg <= 1'b1;
    end
end

// ---- registers -----------------------------------------------------------------

// The table is written at the edge that ends a cfg transfer or a segment's
// last output beat (the patch carries it to a lookup already made). The two
// never coincide: cfg_ready is low while a segment streams.
assign seg_done = step && final_beat;
assign st_fw = {1'b1, mrk_reg, crc_reg, base_reg, end_reg, stash_new};
assign st_wr_en = cfg_fire || seg_done;
assign st_wr_addr = cfg_fire ? cfg_conn : conn_reg;
assign st_wr_data = cfg_fire ? {cfg_en, cfg_mrk_en, cfg_crc_en, cfg_base[8:0], cfg_base, 24'd0} : st_fw;
assign fw_same = hd_same;
assign pt_wait = pt_stale_reg && !fw_same && st_pv;
assign classify = hd_pend && hd_rdy && !pt_wait && !cfg_valid && (state_reg == S_IDLE || seg_done || exc_done);
// Joining: on the clock the segment streaming takes its last input beat
// with a beat without input to follow (pen_reg), the next segment, when it
// is of the same connection (classified with the word this one writes),
// starts exactly at this one's end, is accepted and has a whole word in the
// stream beat the two share (c_hw: so that a beat of it carries m_last),
// takes the place of that beat: its first output beat is the shared one,
// this one's octets (prev_rot_reg: its last input beat, rotated) below its
// own, with no segment end between them on m_* and no table write for
// this one (the next one's, as it ends, covers both). nxt_joins: the
// next segment may be joined (both forms).
wire nxt_joins = hd_pend && hd_rdy && fw_same && !cfg_valid && c_ex0 && c_hw[0] && !hd_len0 && !err_now;
assign seg_join = step && pen_reg && nxt_joins;
// A segment that ends inside a stream beat it took input for (no carried
// beat: fin_ok_reg) hands the next one, under the same conditions, that
// beat instead of its last output beat: the next one is classified as
// usual on that clock, the beat (last_beat: merged, without the stash,
// which is in an earlier beat) goes to prev_rot_reg and not out, and the
// next one's first output beat is it, with its own octets from the end's
// lane. (A segment that ends on a beat's end shares none.)
assign seg_join_last = step && final_beat && fin_ok_reg && nxt_joins;

always @(posedge clk) begin
    if (m_valid && m_ready) begin
        m_valid <= 1'b0;
    end
    m_hint <= classify && look_reason == 3'd0 && !seg_join_last;

    case (state_reg)
    S_STREAM: begin
        if (step) begin
            if (need_in) begin
                in_left_reg <= in_left_m1;
                need_in_reg <= in_left_reg != 18'd1;
            end
            pen_reg <= need_in && xtra_reg && in_left_reg == 18'd2 &&
                       (lo_rem_reg[17] || lo_rem_reg[17:LN+1] == {(17-LN){1'b0}});
            fin_ok_reg <= out_left_reg == 18'd2 && !xtra_reg &&
                          hi_rem_reg[17:LN] == {{(17-LN){1'b0}}, 1'b1} && hi_rem_reg[LN-1:2] != {(LN-2){1'b0}} &&
                          (lo_rem_reg[17] || lo_rem_reg[17:LN] == {(18-LN){1'b0}});
            out_left_reg <= out_left_m1;
            final_reg <= out_left_reg == 18'd2;
            prev_rot_reg <= rot_in;
            lo_rem_reg <= {lo_rem_mn, lo_rem_reg[LN-1:0]};
            hi_rem_reg <= {hi_rem_mn, hi_rem_reg[LN-1:0]};
            phase_reg <= phase_reg + 1'b1;
            if (emit && !seg_join_last) begin
                m_valid <= 1'b1;
                m_data <= merged;
                m_conn <= conn_reg;
                m_first <= !emitted_reg;
                m_cont <= !emitted_reg && em_ok_reg && conn_reg == m_conn;
                em_ok_reg <= 1'b1;
                m_last <= hi_rem_reg <= N18 && !seg_join;
                m_wlo <= wlo;
                m_whi <= whi;
                m_mk <= mrk_reg && phase_reg == {PH_W{1'b0}} && wlo == {WL{1'b0}};
                m_mrk_en <= mrk_reg;
                m_crc_en <= crc_reg;
                emitted_reg <= 1'b1;
            end
            if (final_beat) begin
                state_reg <= S_IDLE;
            end
        end
    end
    S_EXC: begin
        if (in_valid && m_exc_tready && in_last) begin
            state_reg <= S_IDLE;
        end
    end
    default: state_reg <= S_IDLE;
    endcase

    // The next segment (after the case: its registers win over the last
    // beat's updates of the segment before).
    if (load_seg) begin
        conn_reg <= hd_conn;
        seq_reg <= hd_seq;
        len_reg <= hd_len;
        end_reg <= hd_end;
        reason_reg <= look_reason;
        mrk_reg <= st_mrk;
        crc_reg <= st_crc;
        base_reg <= st_base;
        stash_reg <= st_stash;
        stash_n_reg <= any_join ? 2'd0 : nxt_n;
        rot_reg <= rot;
        sidx_reg <= c_sidx[csel];
        // Word boundaries: lo rounds down to the stash's word, hi down to
        // the last whole word.
        lo_rem_reg <= any_join ? 18'd0 : c_lo[csel];
        hi_rem_reg <= c_hi[csel];
        in_left_reg <= in_beats;
        out_left_reg <= out_beats;
        need_in_reg <= !hd_len0;
        final_reg <= c_ob1[csel];
        phase_reg <= c_ph[csel];
        emitted_reg <= any_join;
        prev_rot_reg <= seg_join ? rot_in : seg_join_last ? last_beat : {DATA_W{1'b0}};
        xtra_reg <= c_xt[csel];
        pen_reg <= 1'b0;
        fin_ok_reg <= 1'b0;
        state_reg <= look_reason == 3'd0 ? S_STREAM : S_EXC;
    end

    if (cfg_fire) begin
        em_ok_reg <= 1'b0;
    end
    if (rst) begin
        state_reg <= S_IDLE;
        m_valid <= 1'b0;
        m_hint <= 1'b0;
        em_ok_reg <= 1'b0;
    end
end

endmodule

`resetall
