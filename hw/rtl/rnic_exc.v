// rnic_exc: the exception ring writer (docs/device.md, "Event ring and
// exception ring"): rnic_rx's exception stream in (the segments the data
// path does not take), each segment written into the exception ring cut
// into buffers of 2^buf_log2 octets (a 16-octet header, then the
// segment's octets), one EXCEPTION event out per buffer written. It does
// what the Go model's exception() does (driver/model/rx.go, the oracle).
//
// Input s_exc_*: rnic_rx's m_exc_* (mpa_rx_align's exception stream): one
// frame per segment, lane-0 aligned, every beat full but the last,
// tuser = {conn, seq[31:0], len[15:0], reason[2:0]}, read on the first
// beat. The reason is mpa_rx's code, which is the device's ExcReason
// (driver/hostif: 1 not enabled, 2 in error, 3 out of order, 4 duplicate,
// 5 empty), the classification of the model's segIn: passed on unchanged.
// The octets are counted by len (tkeep is not looked at); beats after the
// len-th octet up to tlast are consumed and ignored. A frame whose tlast
// comes before len octets is not supported (rnic_rx never sends one).
//
// The ring: rnic_admin's evr_valid, evr_exc_ring, evr_exc_log2,
// evr_exc_buf_log2 (EVENT_RING's configuration) and evr_set (its pulse per
// EVENT_RING that succeeded: the producer index PI restarts at 0, as the
// model's ExcPI). A segment:
//   - while no EVENT_RING (evr_valid low at its first beat) is consumed
//     and lost: lost_count + 1, nothing written, no event (the model's
//     lostEvents);
//   - otherwise is cut into buffers of room = 2^buf_log2 - 16 octets (at
//     least one buffer: an empty segment gives a header alone). Buffer k
//     goes to exc_ring + (PI mod 2^exc_log2) * 2^buf_log2, what 7
//     (exception write), 16 + n octets in one request: the header
//     (hostif.ExcHeader: octets 0..1 qpn = conn, 2..3 n, 4..7 seq + k *
//     room, 8 reason, 9..14 zero, 15 phase: 1 on the ring's first pass,
//     0 on the second, ..., bit exc_log2 of PI inverted, as hostif.Phase),
//     then the n octets. On its done: PI + 1 and one EXCEPTION event on
//     ev_* (octet 0 type 3, 1 reason, 2..3 qpn, 4..7 PI after the
//     increment, 8..14 zero), then the next buffer. No consumer index
//     (docs/device.md, open point): the oldest buffer is overwritten when
//     the ring wraps, as the model does;
//   - wr_done_err (refused by the window check, or an AXI error): PI
//     stays, no EXCEPTION; event DMA_REFUSED instead (type 7, detail 7,
//     index qpn, value 16 + n, the buffer address's low 56 bits), as the
//     model's refused(); the rest of the segment is consumed and dropped
//     (the model returns). The DMA_REFUSED is this block's (it knows the
//     qpn): a refusal report (ref_*) of the DMA engine for what 7 repeats
//     it and is not to be turned into a second event (as rnic_cq's).
// An EVENT_RING during a write: PI restarts at 0 all the same, the write
// in flight does not advance it (as rnic_evq).
//
// Stages: the input octets go through an octet accumulator (acc, 4 BYTES
// + 16 octets): a beat is appended behind the octets already in; a
// buffer's header is put in front of them when the buffer starts; the
// write data port takes DATA_W bits from the front (fewer on a frame's
// last beat, where the next buffer's octets stay in acc). So any buffer
// boundary inside a beat and any DATA_W are handled by two shifters
// (append at the count, remove a frame's last partial beat).
//
// State: IDLE (waiting for a segment's first beat); BUF (a buffer's
// request and data out, input beats taken while acc has room for a beat
// and a header); DONE (waiting for the write's done, input beats still
// taken while acc has room); EV (the EXCEPTION or DMA_REFUSED event out,
// then the next buffer or the end of the segment); DROP
// (consuming the rest of a frame: lost, refused, or beats past len).
//
// Cycles: a segment's first beat is looked at in IDLE (one clock: the
// first buffer's request and header are set up), its beats are then taken
// one per clock while the buffer's write data port takes one per clock;
// between buffers the input goes on into acc (up to 4 BYTES octets, 16
// kept for the next header) while the done comes, then waits for the
// event handshake and one setup clock: it never waits for anything but
// this block's own DMA write and its event. A lost segment is consumed at
// one beat per clock. tests/exc measures the input rate with every ready
// high and the done in the next clock (beats per clock, W64 / W256):
// 240-octet segments 0.873 / 0.696, a 3600-octet one (15 buffers of 256)
// 0.891 / 0.769, lost segments 1 / 1.
//
// Not done: buffers are written one at a time (the next request leaves
// after the previous done and its event: a refused buffer must stop the
// segment, as the model's); no counter outputs: the model's rx_exc_*
// counters count buffers written, which are the EXCEPTION events handed
// on (counter of reason r: ev_valid && ev_ready && ev_entry[15:0] ==
// {r, 8'd3}); two segments are never in at once (a segment's first beat
// waits for the previous one's last event), which costs a few clocks per
// segment (tests/exc's figures); an EVENT_RING in the middle of a
// segment sends its remaining buffers to the new ring from PI 0 (the
// model takes a segment whole between two commands: no oracle for it).
//
// Parameters: DATA_W (64, 128, 256, 512); CONN_W (1..16) as rnic_rx's.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_exc #(
    parameter DATA_W = 64,
    parameter CONN_W = 10
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [DATA_W-1:0]     s_exc_tdata,
    input  wire [DATA_W/8-1:0]   s_exc_tkeep,
    input  wire                  s_exc_tvalid,
    output wire                  s_exc_tready,
    input  wire                  s_exc_tlast,
    input  wire [CONN_W+50:0]    s_exc_tuser,

    input  wire                  evr_valid,
    input  wire                  evr_set,
    input  wire [63:0]           evr_exc_ring,
    input  wire [4:0]            evr_exc_log2,
    input  wire [4:0]            evr_exc_buf_log2,

    output wire                  wr_req_valid,
    input  wire                  wr_req_ready,
    output wire [63:0]           wr_req_addr,
    output wire [31:0]           wr_req_len,
    output wire [2:0]            wr_req_what,
    output wire                  wr_valid,
    input  wire                  wr_ready,
    output wire [DATA_W-1:0]     wr_data,
    output wire [DATA_W/8-1:0]   wr_keep,
    output wire                  wr_last,
    input  wire                  wr_done_valid,
    output wire                  wr_done_ready,
    input  wire                  wr_done_err,

    output wire                  ev_valid,
    input  wire                  ev_ready,
    output wire [119:0]          ev_entry,

    output wire [31:0]           lost_count
);
initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_exc: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (CONN_W < 1 || CONN_W > 16) begin
        $error("rnic_exc: CONN_W must be 1 to 16, got %0d", CONN_W);
        $finish;
    end
end

localparam BYTES = DATA_W / 8;
localparam CAP = 4 * BYTES + 16;       // acc's octets
localparam CAPB = CAP * 8;
localparam [31:0] BYTES32 = DATA_W / 8;
localparam [31:0] CAP32 = 4 * BYTES32 + 16;
localparam [9:0]  BYTES10 = BYTES32[9:0];
localparam [16:0] BYTES17 = BYTES32[16:0];
localparam [9:0]  CAP10 = CAP32[9:0];
localparam [2:0] FOR_EXCEPTION = 3'd7;
localparam [7:0] EV_EXCEPTION = 8'd3, EV_DMA_REFUSED = 8'd7;
localparam [2:0] S_IDLE = 3'd0, S_BUF = 3'd1, S_DONE = 3'd2, S_EV = 3'd3, S_DROP = 3'd4;

/* verilator lint_off UNUSEDSIGNAL */
wire [DATA_W/8-1:0] tkeep_unused = s_exc_tkeep;   // the octets are counted by len
/* verilator lint_on UNUSEDSIGNAL */
wire [CONN_W-1:0] t_conn = s_exc_tuser[CONN_W+50:51];
wire [31:0] t_seq = s_exc_tuser[50:19];
wire [15:0] t_len = s_exc_tuser[18:3];
wire [2:0]  t_reason = s_exc_tuser[2:0];

reg  [2:0]      state_reg;
reg  [15:0]     pi_reg;
reg  [CAPB-1:0] acc_reg;
reg  [9:0]      cnt_reg;          // octets in acc
reg  [16:0]     in_left_reg;      // octets of the segment not yet taken in
reg             in_done_reg;      // the segment's tlast taken
reg  [16:0]     seg_left_reg;     // octets not yet given to a buffer
reg  [16:0]     frame_left_reg;   // octets of the buffer's frame not yet out
reg  [31:0]     seq_reg;          // the next buffer's seq
reg  [15:0]     qpn_reg;
reg  [2:0]      reason_reg;
reg  [63:0]     addr_reg;
reg  [31:0]     len_reg;
reg             req_done_reg, data_done_reg, stale_reg, refused_reg;
reg  [31:0]     lost_reg;

// A buffer's setup: from the first beat's tuser in IDLE, from the
// registers between buffers.
wire        first = state_reg == S_IDLE;
wire [16:0] su_left = first ? {1'b0, t_len} : seg_left_reg;
wire [31:0] su_seq = first ? t_seq : seq_reg;
wire [2:0]  su_reason = first ? t_reason : reason_reg;
wire [15:0] su_qpn = first ? {{(16 - CONN_W){1'b0}}, t_conn} : qpn_reg;
wire [16:0] room = (17'd1 << evr_exc_buf_log2) - 17'd16;   // buf_log2 6..16 (rnic_admin)
wire [16:0] su_n = su_left < room ? su_left : room;
wire [15:0] slot = pi_reg & ~(16'hffff << evr_exc_log2);
wire [16:0] pass = {1'b0, pi_reg} >> evr_exc_log2;   // the pass's parity in bit 0
/* verilator lint_off UNUSEDSIGNAL */
wire [15:0] pass_hi = pass[16:1];
/* verilator lint_on UNUSEDSIGNAL */
wire [127:0] su_header = {7'd0, !pass[0], 48'd0, 5'd0, su_reason, su_seq, su_n[15:0], su_qpn};
wire [63:0] su_addr = evr_exc_ring + ({48'd0, slot} << evr_exc_buf_log2);

wire start = first && s_exc_tvalid && evr_valid;
wire next_buf = state_reg == S_EV && ev_ready && !refused_reg && seg_left_reg != 17'd0;
wire setup = start || next_buf;

// The input: a beat is taken in BUF and DONE while acc has room for it and
// for the next buffer's header (never in a clock that puts a header in);
// consumed unseen while lost or dropped.
wire take_in = (state_reg == S_BUF || state_reg == S_DONE) && !in_done_reg && cnt_reg + BYTES10 + 10'd16 <= CAP10;
assign s_exc_tready = take_in || (first && !evr_valid) || state_reg == S_DROP;
wire in_hs = s_exc_tvalid && s_exc_tready;
wire push = take_in && s_exc_tvalid;
wire [16:0] in_n = in_left_reg < BYTES17 ? in_left_reg : BYTES17;
wire [DATA_W-1:0] in_mask = ~({DATA_W{1'b1}} << {in_n[7:0], 3'd0});

// The output: the front of acc.
wire [16:0] out_n = frame_left_reg < BYTES17 ? frame_left_reg : BYTES17;
wire out_last = frame_left_reg <= BYTES17;
assign wr_valid = state_reg == S_BUF && !data_done_reg && {7'd0, cnt_reg} >= out_n;
wire pop = wr_valid && wr_ready;
wire [9:0] cnt_pop = cnt_reg - (pop ? out_n[9:0] : 10'd0);
wire [CAPB-1:0] acc_pop = pop ? acc_reg >> {out_n[7:0], 3'd0} : acc_reg;
wire [CAPB-1:0] in_wide = {{(CAPB - DATA_W){1'b0}}, s_exc_tdata & in_mask};
wire [CAPB-1:0] acc_push = acc_pop | (in_wide << {cnt_pop, 3'd0});

always @(posedge clk) begin
    if (push) begin
        acc_reg <= acc_push;
        cnt_reg <= cnt_pop + in_n[9:0];
        in_left_reg <= in_left_reg - in_n;
    end else begin
        acc_reg <= acc_pop;
        cnt_reg <= cnt_pop;
    end
    if (in_hs && s_exc_tlast) in_done_reg <= 1'b1;
    if (setup) begin
        // No push or pop in IDLE or EV: the header goes in front.
        acc_reg <= {acc_reg[CAPB-129:0], su_header};
        cnt_reg <= cnt_reg + 10'd16;
        seg_left_reg <= su_left - su_n;
        seq_reg <= su_seq + {15'd0, su_n};
        frame_left_reg <= su_n + 17'd16;
        addr_reg <= su_addr;
        len_reg <= {15'd0, su_n + 17'd16};
        req_done_reg <= 1'b0;
        data_done_reg <= 1'b0;
        state_reg <= S_BUF;
    end
    if (start) begin
        reason_reg <= t_reason;
        qpn_reg <= su_qpn;
        in_left_reg <= {1'b0, t_len};
        in_done_reg <= 1'b0;
        stale_reg <= 1'b0;
    end
    case (state_reg)
    S_IDLE: begin
        if (s_exc_tvalid && !evr_valid) begin
            lost_reg <= lost_reg + 32'd1;
            if (!s_exc_tlast) state_reg <= S_DROP;
        end
    end
    S_BUF: begin
        if (wr_req_valid && wr_req_ready) req_done_reg <= 1'b1;
        if (pop) begin
            frame_left_reg <= frame_left_reg - out_n;
            if (out_last) data_done_reg <= 1'b1;
        end
        if ((req_done_reg || wr_req_ready) && (data_done_reg || (pop && out_last))) state_reg <= S_DONE;
    end
    S_DONE: begin
        if (wr_done_valid) begin
            state_reg <= S_EV;
            refused_reg <= wr_done_err;
            if (wr_done_err) begin
                // Refused: DMA_REFUSED, the rest of the segment dropped.
                acc_reg <= {CAPB{1'b0}};
                cnt_reg <= 10'd0;
                in_left_reg <= 17'd0;
            end else if (!stale_reg) begin
                pi_reg <= pi_reg + 16'd1;
            end
        end
    end
    S_EV: begin
        if (ev_ready && (refused_reg || seg_left_reg == 17'd0)) state_reg <= in_done_reg ? S_IDLE : S_DROP;
    end
    S_DROP: begin
        if (in_hs && s_exc_tlast) state_reg <= S_IDLE;
    end
    // verilator coverage_off
    default: state_reg <= S_IDLE;   // unreachable: every state is named above
    // verilator coverage_on
    endcase
    if (evr_set) begin
        pi_reg <= 16'd0;
        if (state_reg == S_BUF || state_reg == S_DONE) stale_reg <= 1'b1;
    end
    if (rst) begin
        state_reg <= S_IDLE;
        pi_reg <= 16'd0;
        acc_reg <= {CAPB{1'b0}};
        cnt_reg <= 10'd0;
        lost_reg <= 32'd0;
        stale_reg <= 1'b0;
        refused_reg <= 1'b0;
        in_done_reg <= 1'b0;
    end
end

assign wr_req_valid = state_reg == S_BUF && !req_done_reg;
assign wr_req_addr = addr_reg;
assign wr_req_len = len_reg;
assign wr_req_what = FOR_EXCEPTION;
assign wr_data = acc_reg[DATA_W-1:0];
assign wr_keep = ~({BYTES{1'b1}} << out_n[7:0]);
assign wr_last = out_last;
assign wr_done_ready = state_reg == S_DONE;
assign ev_valid = state_reg == S_EV;
assign ev_entry = refused_reg ? {addr_reg[55:0], len_reg, qpn_reg, 5'd0, FOR_EXCEPTION, EV_DMA_REFUSED}
                            : {56'd0, 16'd0, pi_reg, qpn_reg, 5'd0, reason_reg, EV_EXCEPTION};
assign lost_count = lost_reg;

endmodule

`resetall
