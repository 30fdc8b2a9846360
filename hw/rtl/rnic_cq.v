// rnic_cq: the CQ writer (docs/device.md, "Completion queue entry" and
// RNDB's CQ_CI). Completion records in, 32-octet CQEs out through one DMA
// write client port, the CQ_CI doorbells' checks, the overrun rule and the
// arm of each CQ's vector. It does what the Go model's complete() and
// cqDoorbell() do (driver/model/datapath.go, doorbell.go, the oracle).
//
// Per CQ it keeps: created (from rnic_admin's cq_cfg_* pulses), overrun,
// arm, solicited-only arm (flip-flops); the producer index PI and the
// consumer index CI (sdp_ram, 16 bits each; a "fresh" flip-flop per index
// stands for the 0 CREATE_CQ writes, so CREATE_CQ costs no RAM write). The
// ring, log2 size and vector come from rnic_admin's CQ table through its
// read port cq_rd_* (owned by this block).
//
// A completion record (cq_valid, cq_cqn, cq_entry = CQE octets 0..30, bit
// 8i of cq_entry is octet i's bit 0) is taken when the writer is idle and
// handled to its end before the next one is taken:
//   1. read: the CQ's context (cq_rd_*), PI and CI (one clock);
//   2. check: a CQ not created takes nothing (the record is dropped, as the
//      model's); an overrun CQ takes nothing (the record is lost: lost
//      pulses); PI - CI >= 2^log2 (the driver has not consumed room for
//      one more entry: the device never writes past CQ_CI) is an overrun:
//      the CQ is marked, the record lost, event CQ_OVERRUN (type 6, index
//      cqn) goes out on ev_*, then cq_ovf_valid/cq_ovf_cqn asks whoever owns
//      the QPs to move every QP that completes into the CQ to the error
//      state (the model's fail(): RTS or created QPs whose send or recv CQ
//      it is; the writer takes no record until cq_ovf_ready). The CQ then
//      takes nothing until DESTROY_CQ and CREATE_CQ;
//   3. write: one request of 32 octets at ring + (PI mod 2^log2) * 32,
//      what 5 (CQE write), its data the record with octet 31 = phase
//      (bit 0: 1 on the ring's first pass, 0 on the second, ...: the bit
//      log2 of the 17-bit PI, inverted, as hostif.Phase), 32/BYTES beats
//      (one at DATA_W 256 and 512, the upper lanes zero at 512);
//   4. done: wr_done_err (the window check refused the write, or an AXI
//      error) loses the record: PI stays, event DMA_REFUSED (type 7,
//      detail 5, index cqn, value 32, the address's low 56 bits), as the
//      model's refused(). Otherwise PI + 1, and if the CQ is armed and
//      either not solicited-only or the entry's status (octet 15) is not
//      SUCCESS or its solicited flag (octet 20 bit 0) is set: one
//      int_valid pulse with the CQ's vector, and the arm clears.
// One record at a time: the next is taken in the clock after done (or
// after the check for a record that writes nothing). Throughput is a CQE
// per about 4 + 32/BYTES + the DMA's done latency clocks; completions are
// one per work request, so this is not the datapath's bound.
//
// CQ_CI doorbells (cqdb_valid, one-clock pulse, no ready; at most one a
// clock): cqdb_cqn is the full index the BAR offset names. A cqn >= 2^CQ_W,
// a CQ not created, or a value with bits 29:16 set is dropped and reported:
// DOORBELL_BAD (type 4, detail 2, index cqn, value the written word).
// Otherwise CI = value[15:0], arm = value[31], solicited-only = value[30]
// (a write without the arm bit disarms, as the model's). One DOORBELL_BAD
// waits for ev_* at a time; a second bad doorbell while it waits is
// dropped and counted (ev_lost pulse): rnic_dev's BAR takes a write in
// several clocks, so only an event port stalled for that long loses one.
// A doorbell in the clock the writer reads the CQ's CI (the clock it takes
// the record) is seen by that record (kept beside the table's word, which
// is read as it was before the write); one in the clock after, while the
// writer checks, is not (the driver gave the room one clock too late for
// it: the record sees the CI before it).
//
// cq_cfg_valid, cq_cfg_cqn, cq_cfg_create: rnic_admin's pulse per
// CREATE_CQ (create 1: the CQ is created, PI = CI = 0, no overrun, no arm)
// and DESTROY_CQ (create 0) that succeeded.
//
// Events (ev_valid, ev_ready, ev_entry: octets 0..14 of the event, the
// event writer adds the phase octet): DOORBELL_BAD first when both wait.
// The CQE write's DMA_REFUSED is this block's (it knows the cqn); a
// refusal report (ref_*) of the DMA engine for what 5 repeats it and is
// not to be turned into a second event.
//
// Outputs: int_valid, int_vector: one clock per armed entry, to rnic_irq;
// lost: one clock per CQE not written (overrun, overrun CQ, refused); the
// model counts these (lostCQEs).
//
// Parameters: DATA_W (64, 128, 256, 512), CQ_W, VEC_W as rnic_dev's.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_cq #(
    parameter DATA_W = 64,
    parameter CQ_W   = 6,
    parameter VEC_W  = 2
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire                  cq_valid,
    output wire                  cq_ready,
    input  wire [CQ_W-1:0]       cq_cqn,
    input  wire [247:0]          cq_entry,

    input  wire                  cqdb_valid,
    input  wire [11:0]           cqdb_cqn,
    input  wire [31:0]           cqdb_value,

    input  wire                  cq_cfg_valid,
    input  wire [CQ_W-1:0]       cq_cfg_cqn,
    input  wire                  cq_cfg_create,

    output wire                  cq_rd_en,
    output wire [CQ_W-1:0]       cq_rd_cqn,
    input  wire                  cq_rd_valid,
    input  wire [64+5+VEC_W-1:0] cq_rd_ctx,    // {ring, log2, vector}

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

    output wire                  cq_ovf_valid,
    input  wire                  cq_ovf_ready,
    output wire [CQ_W-1:0]       cq_ovf_cqn,

    output wire                  int_valid,
    output wire [VEC_W-1:0]      int_vector,
    output wire                  lost,
    output wire                  ev_lost
);
initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_cq: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (CQ_W < 1 || CQ_W > 12 || VEC_W < 1 || VEC_W > 4) begin
        $error("rnic_cq: CQ_W must be 1 to 12 and VEC_W 1 to 4, got %0d, %0d", CQ_W, VEC_W);
        $finish;
    end
end

localparam CQS   = 1 << CQ_W;
localparam BYTES = DATA_W / 8;
localparam BEATS = BYTES >= 32 ? 1 : 32 / BYTES;
localparam BEAT_W = 2;
localparam [BEAT_W-1:0] LAST_BEAT = BEATS[BEAT_W-1:0] - 1'b1;
localparam [63:0] ONES32 = 64'hffff_ffff;
localparam [BYTES-1:0] LAST_KEEP = ONES32[BYTES-1:0];   // 32 octets in the last beat
localparam [7:0] EV_DOORBELL_BAD = 8'd4, EV_CQ_OVERRUN = 8'd6, EV_DMA_REFUSED = 8'd7;
localparam [7:0] DB_CQ_CI = 8'd2, FOR_CQE = 8'd5;

localparam [2:0] S_IDLE = 3'd0, S_CHK = 3'd1, S_WR = 3'd2, S_DONE = 3'd3, S_EV = 3'd4, S_OVF = 3'd5;

// Per-CQ flip-flops.
reg [CQS-1:0] created_reg, ovf_reg, arm_reg, sol_reg, pi_fresh_reg, ci_fresh_reg;

// PI and CI tables.
reg              pi_wr_en;
reg  [15:0]      pi_wr_data;
wire [15:0]      pi_rd_data, ci_rd_data;
wire             eng_rd;
reg  [2:0]       state_reg;
reg  [CQ_W-1:0]  cqn_reg;
reg  [247:0]     entry_reg;

sdp_ram #(.WIDTH(16), .ADDR_W(CQ_W)) pi_ram (
    .clk(clk), .wr_en(pi_wr_en), .wr_addr(cqn_reg), .wr_data(pi_wr_data),
    .rd_en(eng_rd), .rd_addr(cq_cqn), .rd_data(pi_rd_data));

// Doorbells.
wire [CQ_W-1:0] db_cqn = cqdb_cqn[CQ_W-1:0];
wire db_range = CQ_W == 12 || cqdb_cqn < (12'd1 << CQ_W);
wire db_good = db_range && created_reg[db_cqn] && cqdb_value[29:16] == 14'd0;
wire db_ci_wr = cqdb_valid && db_good;

sdp_ram #(.WIDTH(16), .ADDR_W(CQ_W)) ci_ram (
    .clk(clk), .wr_en(db_ci_wr), .wr_addr(db_cqn), .wr_data(cqdb_value[15:0]),
    .rd_en(eng_rd), .rd_addr(cq_cqn), .rd_data(ci_rd_data));

// The record in hand and what the check derived.
wire [63:0]      ctx_ring = cq_rd_ctx[64+5+VEC_W-1:5+VEC_W];
wire [4:0]       ctx_log2 = cq_rd_ctx[5+VEC_W-1:VEC_W];
wire [VEC_W-1:0] ctx_vec  = cq_rd_ctx[VEC_W-1:0];
// A record taken in the clock the previous one's PI + 1 is written (the
// write is registered: the clock after S_DONE) reads the PI word as it was:
// for the same CQ, the value written, kept beside (else the two CQEs take
// one slot).
reg         pi_byp_reg;
reg  [15:0] pi_byp_val_reg;
wire [15:0] pi = pi_byp_reg ? pi_byp_val_reg : pi_fresh_reg[cqn_reg] ? 16'd0 : pi_rd_data;
// A doorbell of the same CQ in the clock of the read wrote the CI word as
// it was read (and cleared the fresh bit): its value, kept beside.
reg         ci_byp_reg;
reg  [15:0] ci_byp_val_reg;
wire [15:0] ci = ci_byp_reg ? ci_byp_val_reg : ci_fresh_reg[cqn_reg] ? 16'd0 : ci_rd_data;
wire [16:0] used = {1'b0, pi - ci};
wire [16:0] size = 17'd1 << ctx_log2;
wire        full = used >= size;
wire [15:0] slot = pi & (size[15:0] - 16'd1);   // size 2^16: 16'hffff
wire [16:0] pass = {1'b0, pi} >> ctx_log2;   // the pass's parity in bit 0
/* verilator lint_off UNUSEDSIGNAL */
wire [15:0] pass_hi = pass[16:1];
/* verilator lint_on UNUSEDSIGNAL */

reg  [63:0]      addr_reg;
reg  [15:0]      pi_reg;
reg              phase_reg;
reg  [VEC_W-1:0] vec_reg;
reg              req_done_reg, data_done_reg;
reg  [BEAT_W-1:0] beat_reg;
reg              eng_ev_reg;        // the engine's event waits for the output register
reg  [119:0]     eng_ev_entry_reg;
reg              ovf_after_reg;     // after the event: the cq_ovf handshake
reg              db_ev_reg;
reg  [119:0]     db_ev_entry_reg;
reg              evo_valid_reg;
reg  [119:0]     evo_entry_reg;
reg              ovf_valid_reg;
reg              int_reg, lost_reg, ev_lost_reg;

assign cq_ready = state_reg == S_IDLE;
assign eng_rd = cq_valid && cq_ready;
assign cq_rd_en = eng_rd;
assign cq_rd_cqn = cq_cqn;

// The CQE: octets 0..30 of the record, octet 31 the phase, 512 bits with
// the upper half zero, cut into beats.
wire [511:0] cqe = {256'd0, 7'd0, phase_reg, entry_reg};
wire [DATA_W-1:0] beat_data = cqe[beat_reg * DATA_W +: DATA_W];
wire armed_entry = arm_reg[cqn_reg] && (!sol_reg[cqn_reg] || entry_reg[127:120] != 8'd0 || entry_reg[160]);

function automatic [119:0] event_f(input [7:0] typ, input [7:0] detail, input [15:0] index,
                                   input [31:0] value, input [55:0] addr);
    event_f = {addr, value, index, detail, typ};
endfunction

always @(posedge clk) begin
    pi_wr_en <= 1'b0;
    int_reg <= 1'b0;
    lost_reg <= 1'b0;
    ev_lost_reg <= 1'b0;
    case (state_reg)
    S_IDLE: begin
        if (eng_rd) begin
            cqn_reg <= cq_cqn;
            entry_reg <= cq_entry;
            ci_byp_reg <= db_ci_wr && db_cqn == cq_cqn;
            ci_byp_val_reg <= cqdb_value[15:0];
            pi_byp_reg <= pi_wr_en && cqn_reg == cq_cqn;
            pi_byp_val_reg <= pi_wr_data;
            state_reg <= S_CHK;
        end
    end
    S_CHK: begin
        addr_reg <= ctx_ring + {43'd0, slot, 5'd0};
        pi_reg <= pi;
        phase_reg <= !pass[0];
        vec_reg <= ctx_vec;
        req_done_reg <= 1'b0;
        data_done_reg <= 1'b0;
        beat_reg <= {BEAT_W{1'b0}};
        if (!cq_rd_valid) begin
            state_reg <= S_IDLE;        // no such CQ: nothing (the model's)
        end else if (ovf_reg[cqn_reg]) begin
            lost_reg <= 1'b1;
            state_reg <= S_IDLE;
        end else if (full) begin
            ovf_reg[cqn_reg] <= 1'b1;
            lost_reg <= 1'b1;
            eng_ev_reg <= 1'b1;
            eng_ev_entry_reg <= event_f(EV_CQ_OVERRUN, 8'd0, {{(16 - CQ_W){1'b0}}, cqn_reg}, 32'd0, 56'd0);
            ovf_after_reg <= 1'b1;
            state_reg <= S_EV;
        end else begin
            state_reg <= S_WR;
        end
    end
    S_WR: begin
        if (wr_req_valid && wr_req_ready) req_done_reg <= 1'b1;
        if (wr_valid && wr_ready) begin
            if (wr_last) data_done_reg <= 1'b1;
            else beat_reg <= beat_reg + 1'b1;
        end
        if ((req_done_reg || wr_req_ready) && (data_done_reg || (wr_valid && wr_ready && wr_last))) begin
            state_reg <= S_DONE;
        end
    end
    S_DONE: begin
        if (wr_done_valid) begin
            if (wr_done_err) begin
                lost_reg <= 1'b1;
                eng_ev_reg <= 1'b1;
                eng_ev_entry_reg <= event_f(EV_DMA_REFUSED, FOR_CQE, {{(16 - CQ_W){1'b0}}, cqn_reg}, 32'd32,
                                            addr_reg[55:0]);
                ovf_after_reg <= 1'b0;
                state_reg <= S_EV;
            end else begin
                pi_wr_en <= 1'b1;
                pi_fresh_reg[cqn_reg] <= 1'b0;
                if (armed_entry) begin
                    int_reg <= 1'b1;
                    arm_reg[cqn_reg] <= 1'b0;
                    sol_reg[cqn_reg] <= 1'b0;
                end
                state_reg <= S_IDLE;
            end
        end
    end
    S_EV: begin
        if (!eng_ev_reg) begin
            state_reg <= ovf_after_reg ? S_OVF : S_IDLE;
            ovf_valid_reg <= ovf_after_reg;
        end
    end
    S_OVF: begin
        if (cq_ovf_ready) begin
            ovf_valid_reg <= 1'b0;
            state_reg <= S_IDLE;
        end
    end
    // verilator coverage_off
    default: state_reg <= S_IDLE;   // unreachable: every state is named above
    // verilator coverage_on
    endcase

    // The event output register: the doorbell's event first.
    if (!evo_valid_reg || ev_ready) begin
        evo_valid_reg <= 1'b0;
        if (db_ev_reg) begin
            evo_valid_reg <= 1'b1;
            evo_entry_reg <= db_ev_entry_reg;
            db_ev_reg <= 1'b0;
        end else if (eng_ev_reg) begin
            evo_valid_reg <= 1'b1;
            evo_entry_reg <= eng_ev_entry_reg;
            eng_ev_reg <= 1'b0;
        end
    end

    // Doorbells (after the engine: a doorbell's arm wins over the engine's
    // clear in the same clock).
    if (cqdb_valid) begin
        if (db_good) begin
            ci_fresh_reg[db_cqn] <= 1'b0;
            arm_reg[db_cqn] <= cqdb_value[31];
            sol_reg[db_cqn] <= cqdb_value[30];
        end else if (db_ev_reg && !(!evo_valid_reg || ev_ready)) begin
            ev_lost_reg <= 1'b1;
        end else begin
            db_ev_reg <= 1'b1;
            db_ev_entry_reg <= event_f(EV_DOORBELL_BAD, DB_CQ_CI, {4'd0, cqdb_cqn}, cqdb_value, 56'd0);
        end
    end

    // CREATE_CQ and DESTROY_CQ.
    if (cq_cfg_valid) begin
        created_reg[cq_cfg_cqn] <= cq_cfg_create;
        if (cq_cfg_create) begin
            ovf_reg[cq_cfg_cqn] <= 1'b0;
            arm_reg[cq_cfg_cqn] <= 1'b0;
            sol_reg[cq_cfg_cqn] <= 1'b0;
            pi_fresh_reg[cq_cfg_cqn] <= 1'b1;
            ci_fresh_reg[cq_cfg_cqn] <= 1'b1;
        end
    end

    if (rst) begin
        state_reg <= S_IDLE;
        created_reg <= {CQS{1'b0}};
        ovf_reg <= {CQS{1'b0}};
        arm_reg <= {CQS{1'b0}};
        sol_reg <= {CQS{1'b0}};
        pi_fresh_reg <= {CQS{1'b1}};
        ci_fresh_reg <= {CQS{1'b1}};
        eng_ev_reg <= 1'b0;
        db_ev_reg <= 1'b0;
        evo_valid_reg <= 1'b0;
        ovf_valid_reg <= 1'b0;
        pi_wr_en <= 1'b0;
        int_reg <= 1'b0;
        lost_reg <= 1'b0;
        ev_lost_reg <= 1'b0;
    end
end

always @* pi_wr_data = pi_reg + 16'd1;

assign wr_req_valid = state_reg == S_WR && !req_done_reg;
assign wr_req_addr = addr_reg;
assign wr_req_len = 32'd32;
assign wr_req_what = FOR_CQE[2:0];
assign wr_valid = state_reg == S_WR && !data_done_reg;
assign wr_data = beat_data;
assign wr_keep = beat_reg == LAST_BEAT ? LAST_KEEP : {BYTES{1'b1}};
assign wr_last = beat_reg == LAST_BEAT;
assign wr_done_ready = state_reg == S_DONE;

assign ev_valid = evo_valid_reg;
assign ev_entry = evo_entry_reg;
assign cq_ovf_valid = ovf_valid_reg;
assign cq_ovf_cqn = cqn_reg;
assign int_valid = int_reg;
assign int_vector = vec_reg;
assign lost = lost_reg;
assign ev_lost = ev_lost_reg;

endmodule

`resetall
