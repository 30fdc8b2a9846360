// rnic_evq: the event writer (docs/device.md, "Event ring and exception
// ring"): event records in from N_SRC sources, 16-octet events out into
// vector 0's event ring through one DMA write client port, each written
// event raising vector 0. It does what the Go model's writeEvent() does
// (driver/model/events.go, the oracle).
//
// Sources: ev_valid[i], ev_ready[i], ev_entry[120i +: 120] (octets 0..14
// of the event; the writer adds octet 15, the phase). One record at a
// time, taken in round-robin order among the valid sources (the source
// after the last one taken first).
//
// The ring: rnic_admin's evr_valid, evr_ring, evr_log2 (EVENT_RING's
// configuration) and evr_set (its pulse per EVENT_RING that succeeded:
// the producer index PI restarts at 0, as the model's). A record:
//   - before EVENT_RING (evr_valid low) is lost: lost_count + 1, nothing
//     written, nothing raised;
//   - otherwise goes to ring + (PI mod 2^log2) * 16, what 6 (event
//     write), octet 15 = phase (1 on the ring's first pass, 0 on the
//     second, ...: bit log2 of the 17-bit PI inverted, as hostif.Phase),
//     in one request (two beats at DATA_W 64, else one, the upper lanes
//     zero). The ring has no consumer index: PI runs on and the writer
//     overwrites the oldest entry when it wraps (docs/device.md, open
//     point; the model does the same);
//   - wr_done_err (refused by the window check, or an AXI error) loses it:
//     lost_count + 1, PI stays, nothing raised (a refused event cannot be
//     reported on the ring it failed to reach);
//   - else PI + 1 and one int_valid pulse (vector 0's entry, to rnic_irq).
// An EVENT_RING during a write: the write goes to the old ring and PI
// starts at 0 on the new one all the same.
//
// Cycles: a record is taken in the clock the writer is idle (ev_ready
// high for the source picked), its request and data leave in the next
// clock, and the next record is taken in the clock after its done (a
// lost record: in the next clock).
//
// Parameters: DATA_W (64, 128, 256, 512); N_SRC, the sources (1..8).
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_evq #(
    parameter DATA_W = 64,
    parameter N_SRC  = 2
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [N_SRC-1:0]      ev_valid,
    output wire [N_SRC-1:0]      ev_ready,
    input  wire [N_SRC*120-1:0]  ev_entry,

    input  wire                  evr_valid,
    input  wire                  evr_set,
    input  wire [63:0]           evr_ring,
    input  wire [4:0]            evr_log2,

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

    output wire                  int_valid,
    output wire [31:0]           lost_count
);
initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_evq: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (N_SRC < 1 || N_SRC > 8) begin
        $error("rnic_evq: N_SRC must be 1 to 8, got %0d", N_SRC);
        $finish;
    end
end

localparam BYTES = DATA_W / 8;
localparam [63:0] ONES16 = 64'hffff;
localparam [BYTES-1:0] LAST_KEEP = ONES16[BYTES-1:0];   // 16 octets in the last beat
localparam [2:0] FOR_EVENT = 3'd6;
localparam [1:0] S_IDLE = 2'd0, S_WR = 2'd1, S_DONE = 2'd2;

reg  [1:0]   state_reg;
reg  [15:0]  pi_reg;
reg  [63:0]  addr_reg;
reg  [119:0] entry_reg;
reg          phase_reg;
reg          req_done_reg, data_done_reg, beat_reg, stale_reg;
reg  [31:0]  lost_reg;
reg          int_reg;
reg  [2:0]   last_src_reg;

// Round robin: the first valid source after the last one taken.
reg        pick_valid;
reg  [2:0] pick;
reg  [3:0] cand;
reg  [7:0] ev_valid8;
always @* begin
    ev_valid8 = 8'd0;
    ev_valid8[N_SRC-1:0] = ev_valid;
end
integer k;
always @* begin
    pick_valid = 1'b0;
    pick = 3'd0;
    cand = 4'd0;
    for (k = N_SRC; k >= 1; k = k - 1) begin
        cand = {1'b0, last_src_reg} + k[3:0];
        if (cand >= N_SRC[3:0] || (N_SRC == 8 && cand[3])) cand = cand - N_SRC[3:0];
        if (ev_valid8[cand[2:0]]) begin
            pick_valid = 1'b1;
            pick = cand[2:0];
        end
    end
end
wire take = state_reg == S_IDLE && pick_valid;
assign ev_ready = take ? ({{(N_SRC - 1){1'b0}}, 1'b1} << pick) : {N_SRC{1'b0}};

wire [15:0] slot = pi_reg & ~(16'hffff << evr_log2);
wire [16:0] pass = {1'b0, pi_reg} >> evr_log2;   // the pass's parity in bit 0
/* verilator lint_off UNUSEDSIGNAL */
wire [15:0] pass_hi = pass[16:1];
/* verilator lint_on UNUSEDSIGNAL */

wire [255:0] event_octets = {128'd0, 7'd0, phase_reg, entry_reg};
wire [511:0] ev_wide = {256'd0, event_octets};
wire [DATA_W-1:0] beat_data = DATA_W == 64 ? ev_wide[{2'd0, beat_reg, 6'd0} +: DATA_W] : ev_wide[DATA_W-1:0];
wire last_beat = DATA_W != 64 || beat_reg;

always @(posedge clk) begin
    int_reg <= 1'b0;
    case (state_reg)
    S_IDLE: begin
        stale_reg <= 1'b0;
        if (take) begin
            last_src_reg <= pick;
            entry_reg <= ev_entry[pick * 120 +: 120];
            addr_reg <= evr_ring + {44'd0, slot, 4'd0};
            phase_reg <= !pass[0];
            req_done_reg <= 1'b0;
            data_done_reg <= 1'b0;
            beat_reg <= 1'b0;
            if (evr_valid) state_reg <= S_WR;
            else lost_reg <= lost_reg + 32'd1;
        end
    end
    S_WR: begin
        if (wr_req_valid && wr_req_ready) req_done_reg <= 1'b1;
        if (wr_valid && wr_ready) begin
            if (last_beat) data_done_reg <= 1'b1;
            else beat_reg <= 1'b1;
        end
        if ((req_done_reg || wr_req_ready) && (data_done_reg || (wr_valid && wr_ready && last_beat))) begin
            state_reg <= S_DONE;
        end
    end
    S_DONE: begin
        if (wr_done_valid) begin
            state_reg <= S_IDLE;
            if (wr_done_err) begin
                lost_reg <= lost_reg + 32'd1;
            end else begin
                int_reg <= 1'b1;
                if (!stale_reg) pi_reg <= pi_reg + 16'd1;
            end
        end
    end
    // verilator coverage_off
    default: state_reg <= S_IDLE;   // unreachable: every state is named above
    // verilator coverage_on
    endcase
    if (evr_set) begin
        pi_reg <= 16'd0;
        if (state_reg != S_IDLE) stale_reg <= 1'b1;
    end
    if (rst) begin
        state_reg <= S_IDLE;
        pi_reg <= 16'd0;
        lost_reg <= 32'd0;
        int_reg <= 1'b0;
        stale_reg <= 1'b0;
        last_src_reg <= N_SRC[2:0] - 3'd1;   // source 0 first
    end
end

assign wr_req_valid = state_reg == S_WR && !req_done_reg;
assign wr_req_addr = addr_reg;
assign wr_req_len = 32'd16;
assign wr_req_what = FOR_EVENT;
assign wr_valid = state_reg == S_WR && !data_done_reg;
assign wr_data = beat_data;
assign wr_keep = last_beat ? LAST_KEEP : {BYTES{1'b1}};
assign wr_last = last_beat;
assign wr_done_ready = state_reg == S_DONE;
assign int_valid = int_reg;
assign lost_count = lost_reg;

endmodule

`resetall
