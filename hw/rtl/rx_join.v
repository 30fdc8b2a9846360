// rx_join: joins a ULPDU's first pieces until they hold its DDP/RDMAP
// header, between mpa_rx and ddp_rx, for many connections, DATA_W bits per
// clock.
//
// mpa_rx cuts each ULPDU (DDP segment) into pieces at TCP segment
// boundaries; ddp_rx needs the first piece of every ULPDU to hold at least
// min(46, ULPDU_Length) octets, the longest DDP/RDMAP header (an RDMA Read
// Request: 18-octet untagged DDP header, RFC 5041 4.3, and its 28-octet
// RDMAP body, RFC 5040 4.4), so that the header is never split
// (hw/README.md, "MPA receive path and the interface to placement").
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
//     pieces: a verdict goes out only after every last piece (tuser last)
//     that came in before it has left m_axis, never in the clock of that
//     piece's tlast beat (hw/README.md's rule holds on m_axis).
//   clr_valid, clr_ready, clr_conn: clears connection clr_conn's held
//     octets (drive it when the connection is (re)configured); takes
//     effect for pieces of that connection that arrive after it. Do not
//     clear a connection while one of its pieces is inside the block.
//
// Structure: an input register (where the connection's held state is
// read from its sdp_ram, with a bypass for writes since the read), an
// octet queue Q of max(45 + 2N, 3N) octets (N = DATA_W / 8) that the input
// beat is appended to, rotated by the queue's fill, and an output register
// that takes the queue's first N octets. A first piece, or a piece joined
// to held octets, gathers in Q until min(46, ulpdu_len) octets are there
// (then it streams out, rotated), or until its end (then it is held,
// unless it ends the ULPDU). The held state, {valid, count, ulpdu_len, 45
// octets}, is written when the piece's tlast beat is taken.
//
// Latency, from the clock a piece's first beat is taken to the clock its
// first output beat can be: 2, and for a first piece until min(46,
// ulpdu_len) octets or its end are in (at DATA_W = 64: 6 beats; at 512,
// the first beat).
// Throughput: 1 beat a clock within a piece; the queue empties at a
// piece's end before the next piece is taken (1 clock more for a piece
// whose rotated octets spill into another beat); a joined piece costs 1
// clock to load the held octets.
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
localparam QLIM = (HOLD + N > 2 * N) ? HOLD + N : 2 * N;   // the queue takes a beat up to this fill
localparam QW = QLIM + N;                   // octets in the queue
localparam HW = 1 + 6 + 16 + 8 * HOLD;      // held state: {valid, count, ulpdu_len, octets}
localparam UW = CONN_W + 18;
localparam [6:0] HDR = 7'd46;               // the longest DDP/RDMAP header (RFC 5040 4.4)
localparam integer NI = N;
localparam integer QLIMI = QLIM;
localparam [7:0] N8 = NI[7:0];
localparam [7:0] QLIM8 = QLIMI[7:0];

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

// Octets in a tkeep that is a run from lane 0.
function [LG:0] keep_count(input [N-1:0] k);
    integer b;
    begin
        keep_count = 0;
        for (b = 0; b < N; b = b + 1) begin
            if (k[b]) begin
                keep_count = b[LG:0] + 1'b1;
            end
        end
    end
endfunction

// ---- input register ------------------------------------------------------------------

reg              in_sof_reg;                // the next s_axis beat starts a piece
reg              a_valid_reg;
reg [DATA_W-1:0] a_data_reg;
reg [LG:0]       a_cnt_reg;                 // its octets
reg              a_tlast_reg;
reg              a_sof_reg;
reg [CONN_W-1:0] a_conn_reg;
reg              a_first_reg;
reg              a_plast_reg;               // tuser last (on the tlast beat)
reg [15:0]       a_ulen_reg;
reg [6:0]        a_hdr_reg;                 // min(46, ulpdu_len)

wire [15:0] s_ulen = s_axis_tuser[CONN_W+17:CONN_W+2];
wire [CONN_W-1:0] s_conn = s_axis_tuser[CONN_W+1:2];

wire a_take;                                // the queue takes the beat in A
assign s_axis_tready = !a_valid_reg || a_take;
wire s_go = s_axis_tvalid && s_axis_tready;

// ---- held state per connection ---------------------------------------------------------

wire          rd_en = s_go && in_sof_reg;
wire [HW-1:0] rd_data;
wire          wr_en;
wire [CONN_W-1:0] wr_addr;
wire [HW-1:0] wr_data;

sdp_ram #(.WIDTH(HW), .ADDR_W(CONN_W)) held_ram (
    .clk(clk),
    .wr_en(wr_en), .wr_addr(wr_addr), .wr_data(wr_data),
    .rd_en(rd_en), .rd_addr(s_conn), .rd_data(rd_data)
);

// The RAM returns the word as it was at the read; a write to the same
// connection at or after the read (the end of that connection's previous
// piece, or a clear) is kept here instead.
reg          byp_hit_reg;
reg [HW-1:0] byp_data_reg;

wire [HW-1:0] held = byp_hit_reg ? byp_data_reg : rd_data;
wire          h_valid = held[HW-1];
wire [7:0]    h_cnt = {2'b0, held[HW-2:HW-7]};
wire [15:0]   h_ulen = held[HW-8:HW-23];
wire [8*HOLD-1:0] h_data = held[8*HOLD-1:0];

// ---- the queue -------------------------------------------------------------------------

reg [8*QW-1:0]   q_data_reg;
reg [7:0]        q_cnt_reg;
reg              act_reg;                   // a piece is in progress in the queue
reg              dec_reg;                   // its octets may go out (header complete)
reg              endf_reg;                  // its tlast beat has been taken
reg              f_first_reg, f_last_reg, f_hv_reg;
reg [CONN_W-1:0] f_conn_reg;
reg [15:0]       f_ulen_reg;
reg [6:0]        f_hdr_reg;

// A piece starts when its first beat is in A and the queue is free.
wire start = !act_reg && a_valid_reg && a_sof_reg;
// With octets held (and the piece not a new first one: then the held
// octets are dropped), the queue first loads them, for one clock.
wire join_load = start && h_valid && !a_first_reg;

wire e_first = act_reg ? f_first_reg : a_first_reg;
wire e_dec = act_reg ? dec_reg : !a_first_reg;
wire [6:0] e_hdr = act_reg ? f_hdr_reg : a_hdr_reg;
wire e_hv = act_reg ? f_hv_reg : h_valid;
wire [15:0] e_ulen = act_reg ? f_ulen_reg : a_ulen_reg;
wire [CONN_W-1:0] e_conn = act_reg ? f_conn_reg : a_conn_reg;

// A beat of the piece in progress (or the first of one starting) is taken
// while the queue has room for a whole beat.
assign a_take = a_valid_reg && !endf_reg && q_cnt_reg <= QLIM8 && (act_reg || (start && !join_load));
wire busy = act_reg || (start && !join_load);

wire [7:0] t = q_cnt_reg + (a_take ? {{(7-LG){1'b0}}, a_cnt_reg} : 8'd0);
wire tl = a_take && a_tlast_reg;
wire end_now = endf_reg || tl;
wire e_plast = endf_reg ? f_last_reg : a_plast_reg;
wire dec_now = e_dec || {1'b0, t} >= {2'b0, e_hdr} || (end_now && e_plast);
wire hold = tl && !dec_now;

// A beat goes out as soon as the piece's header is complete (or the piece
// ends) and a whole beat is in (or the piece's end is). last is driven on
// the piece's tlast beat only, where ddp_rx reads it (hw/README.md); a
// piece whose octets all went out before its end was seen closes with an
// empty tlast beat (tkeep 0), as mpa_rx's pieces may.
wire emit_can = busy && dec_now && (end_now || t >= N8);

reg o_valid_reg;
wire o_room = !o_valid_reg || m_axis_tready;
wire emit = emit_can && o_room;
wire o_end = end_now && t <= N8;                          // the final beat of the piece
wire fin = (emit && o_end) || hold;        // the piece leaves the queue

// The beat in A rotated to the queue's fill (lane j holds octet j - fill).
wire [LG-1:0] q_rot = q_cnt_reg[LG-1:0];
wire [LG+3:0] rot_up = {1'b0, q_rot, 3'b000};
wire [LG+3:0] rot_dn = DATA_W[LG+3:0] - rot_up;   // DATA_W when q_rot = 0: shifts to 0
wire [DATA_W-1:0] rot = (a_data_reg << rot_up) | (a_data_reg >> rot_dn);

// V: the queue's octets followed by the beat's.
reg [8*QW-1:0] v;
integer i;
always @* begin
    for (i = 0; i < QW; i = i + 1) begin
        v[8*i +: 8] = (i < q_cnt_reg) ? q_data_reg[8*i +: 8] : rot[8*(i % N) +: 8];
    end
end

reg [N-1:0] o_keep;
always @* begin
    for (i = 0; i < N; i = i + 1) begin
        o_keep[i] = i < t;
    end
end

// ---- held state writes -----------------------------------------------------------------

// At a piece's tlast beat: hold its octets, or clear what was held.
wire fw_en = tl && (hold || e_hv);
wire [HW-1:0] fw_data = hold ? {1'b1, t[5:0], e_ulen, v[8*HOLD-1:0]} : {HW{1'b0}};
wire unused_t = &{1'b0, t[7:6]};

reg              clr_pend_reg;
reg [CONN_W-1:0] clr_conn_reg;
assign clr_ready = !clr_pend_reg;

assign wr_en = fw_en || clr_pend_reg;
assign wr_addr = fw_en ? e_conn : clr_conn_reg;
assign wr_data = fw_en ? fw_data : {HW{1'b0}};

// ---- next state --------------------------------------------------------------------------

reg [8*QW-1:0] q_data_next;
reg [7:0]      q_cnt_next;
always @* begin
    q_data_next = v;
    q_cnt_next = t;
    if (join_load) begin
        q_data_next[8*HOLD-1:0] = h_data;
        q_cnt_next = h_cnt;
    end else if (fin) begin
        q_cnt_next = 8'd0;
    end else if (emit) begin
        for (i = 0; i < QLIM; i = i + 1) begin
            q_data_next[8*i +: 8] = v[8*(i+N) +: 8];
        end
        q_cnt_next = t - N8;
    end
end

// ---- output register ---------------------------------------------------------------------

reg [DATA_W-1:0] o_data_reg;
reg [N-1:0]      o_keep_reg;
reg              o_tlast_reg;
reg [UW-1:0]     o_user_reg;

assign m_axis_tdata = o_data_reg;
assign m_axis_tkeep = o_keep_reg;
assign m_axis_tvalid = o_valid_reg;
assign m_axis_tlast = o_tlast_reg;
assign m_axis_tuser = o_user_reg;

// ---- verdicts: in order with the last pieces ----------------------------------------------
// The counters are 4 bits: a verdict is let go once out_lasts has caught up
// with the in_lasts it saw, compared modulo 16, which is right while fewer
// than 8 last pieces are inside the block; its input register, join stage
// and output register hold at most three.

reg [3:0]        in_lasts_reg;              // last pieces taken on s_axis
reg [3:0]        out_lasts_reg;             // last pieces gone out on m_axis
reg              v_valid_reg;
reg              v_ok_reg;
reg [3:0]        v_tgt_reg;
reg [2:0]        v_code_reg;
reg [CONN_W-1:0] v_conn_reg;

wire [3:0] v_diff = out_lasts_reg - v_tgt_reg;   // in 0..7: all of them out
wire v_ok = v_ok_reg || !v_diff[3];
wire unused_ok = &{1'b0, v_diff[2:0]};
assign s_verdict_tready = !v_valid_reg;
assign m_verdict_tvalid = v_valid_reg && v_ok;
assign m_verdict_tdata = v_code_reg;
assign m_verdict_tuser = v_conn_reg;
wire v_go = m_verdict_tvalid && m_verdict_tready;

always @(posedge clk) begin
    // input register
    if (s_go) begin
        in_sof_reg <= s_axis_tlast;
        a_valid_reg <= 1'b1;
        a_data_reg <= s_axis_tdata;
        a_cnt_reg <= keep_count(s_axis_tkeep);
        a_tlast_reg <= s_axis_tlast;
        a_sof_reg <= in_sof_reg;
        a_first_reg <= s_axis_tuser[1];
        a_plast_reg <= s_axis_tuser[0];
        if (in_sof_reg) begin
            a_conn_reg <= s_conn;
            a_ulen_reg <= s_ulen;
            a_hdr_reg <= s_ulen < {9'd0, HDR} ? s_ulen[6:0] : HDR;
        end
    end else if (a_take) begin
        a_valid_reg <= 1'b0;
    end

    // bypass of the held-state RAM
    if (rd_en) begin
        byp_hit_reg <= wr_en && wr_addr == s_conn;
        byp_data_reg <= wr_data;
    end else if (wr_en && wr_addr == a_conn_reg) begin
        byp_hit_reg <= 1'b1;
        byp_data_reg <= wr_data;
    end

    // queue
    q_data_reg <= q_data_next;
    q_cnt_reg <= q_cnt_next;
    if (join_load) begin
        act_reg <= 1'b1;
        dec_reg <= 1'b0;
        endf_reg <= 1'b0;
        f_first_reg <= 1'b1;
        f_hv_reg <= 1'b1;
        f_conn_reg <= a_conn_reg;
        f_ulen_reg <= h_ulen;
        f_hdr_reg <= h_ulen < {9'd0, HDR} ? h_ulen[6:0] : HDR;
    end else if (busy) begin
        if (!act_reg) begin
            f_first_reg <= a_first_reg;
            f_hv_reg <= h_valid;
            f_conn_reg <= a_conn_reg;
            f_ulen_reg <= a_ulen_reg;
            f_hdr_reg <= a_hdr_reg;
        end
        act_reg <= !fin;
        dec_reg <= dec_now;
        if (tl) begin
            endf_reg <= 1'b1;
            f_last_reg <= a_plast_reg;
        end
        if (fin) begin
            endf_reg <= 1'b0;
        end
    end

    // output register
    if (emit) begin
        o_valid_reg <= 1'b1;
        o_data_reg <= v[DATA_W-1:0];
        o_keep_reg <= o_keep;
        o_tlast_reg <= o_end;
        o_user_reg <= {e_ulen, e_conn, e_first, e_plast && o_end};
    end else if (m_axis_tready) begin
        o_valid_reg <= 1'b0;
    end

    // clears
    if (clr_valid && clr_ready) begin
        clr_pend_reg <= 1'b1;
        clr_conn_reg <= clr_conn;
    end else if (!fw_en) begin
        clr_pend_reg <= 1'b0;
    end

    // verdicts
    if (s_go && s_axis_tlast && s_axis_tuser[0]) begin
        in_lasts_reg <= in_lasts_reg + 4'd1;
    end
    if (o_valid_reg && m_axis_tready && o_tlast_reg && o_user_reg[0]) begin
        out_lasts_reg <= out_lasts_reg + 4'd1;
    end
    if (s_verdict_tvalid && s_verdict_tready) begin
        v_valid_reg <= 1'b1;
        v_ok_reg <= 1'b0;
        v_tgt_reg <= in_lasts_reg;
        v_code_reg <= s_verdict_tdata;
        v_conn_reg <= s_verdict_tuser;
    end else if (v_go) begin
        v_valid_reg <= 1'b0;
        v_ok_reg <= 1'b0;
    end else begin
        v_ok_reg <= v_valid_reg && v_ok;
    end

    if (rst) begin
        in_sof_reg <= 1'b1;
        a_valid_reg <= 1'b0;
        byp_hit_reg <= 1'b0;
        q_cnt_reg <= 8'd0;
        act_reg <= 1'b0;
        dec_reg <= 1'b0;
        endf_reg <= 1'b0;
        o_valid_reg <= 1'b0;
        clr_pend_reg <= 1'b0;
        in_lasts_reg <= 4'd0;
        out_lasts_reg <= 4'd0;
        v_valid_reg <= 1'b0;
        v_ok_reg <= 1'b0;
    end
end

endmodule

`resetall
