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
// m_hint: high for the clock after an accepted segment's classification,
// with m_hint_conn its connection, before its first output beat.
// Output m_*: one beat per stream beat that holds at least one new whole
// word: words [m_wlo, m_whi) of m_data are valid; m_mk says word 0 of this
// beat is a marker position (markers on and stream offset a multiple of
// 512); m_first/m_last mark the segment's first and last output beat; a
// segment that completes no word has none. m_mrk_en, m_crc_en, m_conn are
// the segment's.
// Exceptions m_exc_*: the segment's frame as it came in, tuser = {conn,
// seq, len, reason[2:0]}.
//
// Lookahead: s_axis goes through a two-beat input FIFO (in_*, in1_*). The
// table is read at the edge where a segment's first beat enters it, while
// the segment before may still be streaming; a table write that lands at
// that edge or later (the segment before ends, cfg, err) and concerns the
// same connection is kept beside the word read (the patch) and used
// instead of the RAM's. The segment is classified on the clock the one
// before takes its last output beat (or its exception frame its last
// beat), with the word that beat writes when the connection is the same,
// or on an idle clock. One first beat at a time waits to be classified: a
// second waits on s_axis.
//
// Throughput: one output beat per clock, plus one per segment whose octets
// straddle one more beat than they arrived in; a segment of one input beat
// that follows another costs a clock more. Latency: 3 clocks from a
// segment's first beat on s_axis to its first output beat.

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

`include "rnic_arith.vh"

localparam N = DATA_W / 8;
localparam LN = $clog2(N);
localparam WORDS = DATA_W / 32;
localparam WL = $clog2(WORDS) + 1;   // a word count 0 .. WORDS
localparam PH_W = 9 - LN;            // beat index within a marker interval
localparam ST_W = 1 + 1 + 1 + 9 + 32 + 24;
localparam [17:0] N18 = {{(17 - LN){1'b0}}, 1'b1, {LN{1'b0}}};
localparam [LN:0] N1 = {1'b1, {LN{1'b0}}};

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
reg              in1_valid;            // the beat behind it
reg [DATA_W-1:0] in1_data;
reg [N-1:0]      in1_keep;
reg              in1_last;
wire             in_take;
reg              s_first_reg;          // the next s_axis beat starts a segment
reg              hd_pend;              // a first beat in the FIFO waits to be classified
reg              hd_same;              // ... of the connection of the segment streaming

// The segment whose first beat is in the input register (or was: these
// hold until the next first beat comes in).
reg [CONN_W-1:0] hd_conn;
reg [31:0]       hd_seq, hd_end;
reg [15:0]       hd_len;

wire s_fire = s_axis_tvalid && s_axis_tready;
wire look_start = s_fire && s_first_reg;   // read the tables for it

wire cfg_fire = cfg_valid && cfg_ready;
wire classify;

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
reg [17:0]       lo_rem_reg, hi_rem_reg; // octets from this beat to lo, hi
reg [17:0]       in_left_reg;            // input beats still to take
reg [17:0]       out_left_reg;           // output beats still to make
reg              need_in_reg;            // in_left_reg != 0
reg              final_reg;              // out_left_reg == 1
reg [PH_W-1:0]   phase_reg;              // beat index mod 512/N
reg              emitted_reg;
reg [DATA_W-1:0] prev_rot_reg;

// ---- lookup: classify --------------------------------------------------------

wire        st_en   = st_cls[ST_W-1];
wire        st_mrk  = st_cls[ST_W-2];
wire        st_crc  = st_cls[ST_W-3];
wire [8:0]  st_base = st_cls[ST_W-4 -: 9];
wire [15:0] st_nxt  = st_cls[39:24];       // rcv_nxt's low half (the comparisons read each word's)
wire [23:0] st_stash = st_cls[23:0];

// after32(a, b): a comes after b in sequence arithmetic, 0 < a - b < 2^31:
// with equal top bits a's low 31 bits are over b's, with different ones
// under them (two tree comparisons, not a 32-bit subtraction's ripple).
function after32(input [31:0] a, input [31:0] b);
    after32 = a[31] == b[31] ? gt33({2'b00, a[30:0]}, {2'b00, b[30:0]})
                             : gt33({2'b00, b[30:0]}, {2'b00, a[30:0]});
endfunction
// A hole before the segment (seq after rcv_nxt), and nothing new (its end
// not after rcv_nxt): worked out for each word the classification may use
// (the one being written, the patch, the RAM's) and then picked, so the
// comparisons start at registers.
wire        ooo_fw  = after32(hd_seq, end_reg);
wire        ooo_pt  = after32(hd_seq, st_patch[55:24]);
wire        ooo_rd  = after32(hd_seq, st_rd[55:24]);
wire        new_fw  = after32(hd_end, end_reg);
wire        new_pt  = after32(hd_end, st_patch[55:24]);
wire        new_rd  = after32(hd_end, st_rd[55:24]);
wire        is_ooo  = fw_same ? ooo_fw : st_pv ? ooo_pt : ooo_rd;
wire        is_dup  = !(fw_same ? new_fw : st_pv ? new_pt : new_rd);
wire [15:0] skip    = st_nxt[15:0] - hd_seq[15:0]; // octets already received (< len)
wire [8:0]  off9    = hd_seq[8:0] - st_base;     // (seq - base) mod 512
wire [LN-1:0] rot   = off9[LN-1:0];
wire [17:0] lo_rel  = {2'b00, skip} + {{(18-LN){1'b0}}, rot};
wire [17:0] hi_rel  = {2'b00, hd_len} + {{(18-LN){1'b0}}, rot};
wire [2:0]  look_reason =
    !st_en     ? 3'd1 :
    err_now    ? 3'd2 :
    hd_len == 16'd0 ? 3'd5 :
    is_ooo     ? 3'd3 :
    is_dup     ? 3'd4 : 3'd0;
wire [1:0]  nxt_n   = st_nxt[1:0] - st_base[1:0];
wire [17:0] hi_round = hi_rel + (N18 - 18'd1);
wire [17:0] out_beats = hi_round >> LN;          // beats the octets straddle
wire [17:0] in_round = {2'b00, hd_len} + (N18 - 18'd1);
wire [17:0] in_beats = in_round >> LN;           // beats the segment arrives in

// ---- streaming: one output beat a clock ----------------------------------------

wire out_adv = !m_valid || m_ready;
wire need_in = need_in_reg;
wire step = state_reg == S_STREAM && out_adv && (!need_in || in_valid);

wire [2*DATA_W-1:0] dbl = {in_data, in_data};
wire [LN:0] rot_back = N1 - {1'b0, rot_reg};
wire [DATA_W-1:0] rot_in = need_in ? dbl[{rot_back, 3'b000} +: DATA_W] : {DATA_W{1'b0}};

// Word range of this beat, the stash merged into the word at lo, and the
// stash after the segment: the octets of the word at hi (the first one not
// whole), used when the last output beat is made.
wire lo_here = !lo_rem_reg[17] && lo_rem_reg < N18;
wire [31:0] stash32 = {8'd0, stash_reg};
wire [DATA_W-1:0] merged;
wire [23:0] stash_new;
wire [WL-1:0] wlo = (lo_rem_reg[17] || lo_rem_reg == 18'd0) ? {WL{1'b0}} :
                    (lo_rem_reg >= N18) ? WORDS[WL-1:0] : lo_rem_reg[WL+1:2];
wire [WL-1:0] whi = (hi_rem_reg[17] || hi_rem_reg < 18'd4) ? {WL{1'b0}} :
                    (hi_rem_reg >= N18) ? WORDS[WL-1:0] : hi_rem_reg[WL+1:2];
genvar g;
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
    end
    for (g = 0; g < 3; g = g + 1) begin : keep
        wire [7:0] octets [0:WORDS-1];
        genvar k;
        for (k = 0; k < WORDS; k = k + 1) begin : word
            assign octets[k] = merged[32*k + 8*g +: 8];
        end
        assign stash_new[8*g +: 8] = octets[hi_rem_reg[LN-1:2]];
    end
endgenerate

wire emit = whi > wlo;
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
assign s_axis_tready = (!in1_valid || in_take) && !(s_first_reg && hd_pend);

always @(posedge clk) begin
    if (in_take) begin
        in_valid <= in1_valid;
        in1_valid <= 1'b0;
        in_data <= in1_data;
        in_keep <= in1_keep;
        in_last <= in1_last;
    end
    if (s_fire) begin
        if (!in_valid || (in_take && !in1_valid)) begin
            in_valid <= 1'b1;
            in_data <= s_axis_tdata;
            in_keep <= s_axis_tkeep;
            in_last <= s_axis_tlast;
        end else begin
            in1_valid <= 1'b1;
            in1_data <= s_axis_tdata;
            in1_keep <= s_axis_tkeep;
            in1_last <= s_axis_tlast;
        end
        s_first_reg <= s_axis_tlast;
    end
    if (look_start) begin
        hd_pend <= 1'b1;
        // (look_start never meets classify: conn_reg is the segment's.)
        hd_same <= s_conn == conn_reg;
        hd_conn <= s_conn;
        hd_seq <= s_seq;
        hd_len <= s_len;
        hd_end <= s_seq + {16'd0, s_len};
    end
    if (classify) begin
        hd_pend <= 1'b0;
    end
    if (rst) begin
        in_valid <= 1'b0;
        in1_valid <= 1'b0;
        hd_pend <= 1'b0;
        s_first_reg <= 1'b1;
    end
end

// ---- registers -----------------------------------------------------------------

// The table is written at the edge that ends a cfg transfer or a segment's
// last output beat (the patch carries it to a lookup already made). The two
// never coincide: cfg_ready is low while a segment streams.
wire seg_done = step && final_beat;
assign st_fw = {1'b1, mrk_reg, crc_reg, base_reg, end_reg, stash_new};
assign st_wr_en = cfg_fire || seg_done;
assign st_wr_addr = cfg_fire ? cfg_conn : conn_reg;
assign st_wr_data = cfg_fire ? {cfg_en, cfg_mrk_en, cfg_crc_en, cfg_base[8:0], cfg_base, 24'd0} : st_fw;
assign fw_same = state_reg == S_STREAM && hd_same;
assign classify = hd_pend && !cfg_valid && (state_reg == S_IDLE || seg_done || exc_done);

always @(posedge clk) begin
    if (m_valid && m_ready) begin
        m_valid <= 1'b0;
    end
    m_hint <= classify && look_reason == 3'd0;

    case (state_reg)
    S_STREAM: begin
        if (step) begin
            if (need_in) begin
                in_left_reg <= in_left_reg - 18'd1;
                need_in_reg <= in_left_reg != 18'd1;
            end
            out_left_reg <= out_left_reg - 18'd1;
            final_reg <= out_left_reg == 18'd2;
            prev_rot_reg <= rot_in;
            lo_rem_reg <= lo_rem_reg - N18;
            hi_rem_reg <= hi_rem_reg - N18;
            phase_reg <= phase_reg + 1'b1;
            if (emit) begin
                m_valid <= 1'b1;
                m_data <= merged;
                m_conn <= conn_reg;
                m_first <= !emitted_reg;
                m_last <= hi_rem_reg <= N18;
                m_wlo <= wlo;
                m_whi <= whi;
                m_mk <= mrk_reg && phase_reg == {PH_W{1'b0}};
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
    if (classify) begin
        conn_reg <= hd_conn;
        seq_reg <= hd_seq;
        len_reg <= hd_len;
        end_reg <= hd_end;
        reason_reg <= look_reason;
        mrk_reg <= st_mrk;
        crc_reg <= st_crc;
        base_reg <= st_base;
        stash_reg <= st_stash;
        stash_n_reg <= nxt_n;
        rot_reg <= rot;
        // Word boundaries: lo rounds down to the stash's word, hi down to
        // the last whole word.
        lo_rem_reg <= lo_rel & 18'h3FFFC;
        hi_rem_reg <= hi_rel & 18'h3FFFC;
        in_left_reg <= in_beats;
        out_left_reg <= out_beats;
        need_in_reg <= hd_len != 16'd0;
        final_reg <= out_beats == 18'd1;
        phase_reg <= off9[8:LN];
        emitted_reg <= 1'b0;
        prev_rot_reg <= {DATA_W{1'b0}};
        state_reg <= look_reason == 3'd0 ? S_STREAM : S_EXC;
    end

    if (rst) begin
        state_reg <= S_IDLE;
        m_valid <= 1'b0;
        m_hint <= 1'b0;
    end
end

endmodule

`resetall
