// rnic_irq: the interrupt vectors (docs/device.md, RNIV): each vector's
// registers CTRL (enable [0], mask [1]), MOD_COUNT ([15:0]), MOD_TIME
// ([31:0]) and PENDING ([0], write 1 to clear), its moderation, and the
// interrupt messages out (MSI-X style: one message names one vector).
//
// Registers: the RNIV external region as rnic_regs hands it out (rnic_dev's
// hwif_out_vectors_vec_* / hwif_in_vectors_vec_*): vec_req with
// vec_req_is_wr, vec_addr (the octet offset in the region: function in
// [7:6], 0 CTRL, 1 MOD_COUNT, 2 MOD_TIME, 3 PENDING; vector in [5:2]),
// vec_wr_data and vec_wr_biten (bit enables). Both acks come in the clock
// of the request; a read's data with it. Registers of a vector this build
// does not have (vector >= 2^VEC_W) read 0 and ignore writes.
//
// Entries: int_valid[i] with int_vector[i] is one entry for that vector
// (a CQE of an armed CQ, an event for vector 0), from N_SRC sources; all
// of them count in the same clock.
//
// The rule, per vector (driver/model's events.go does the same):
//   - every entry counts (enabled or not, masked or not): u, the entries
//     not yet signalled, + 1; the clock that takes an entry while u is 0
//     starts the age (clocks since the first unsignalled entry);
//   - the interrupt is due at the clock that takes the entry making u
//     reach MOD_COUNT (every entry when MOD_COUNT is 0 or 1), or at the
//     clock MOD_TIME clocks after the one that took the first unsignalled
//     entry (MOD_TIME 0: never by time), whichever comes first. Due: u
//     returns to 0 (every entry so far is signalled), PENDING sets, and if
//     the vector is enabled a message is owed (an owed message absorbs
//     later ones: one bit per vector);
//   - enable 0: no message is owed (clearing enable drops an owed one);
//     the entries still count and PENDING still sets, for a driver that
//     polls;
//   - mask 1: an owed message is held; it leaves once mask is cleared (and
//     the vector still enabled);
//   - PENDING: set at every due interrupt, cleared by writing 1 (a due
//     interrupt in the clock of the write wins).
// Output: irq_valid, irq_ready, irq_vector: one message at a time, the
// owed, enabled, unmasked vectors in round-robin order. irq_valid rises
// one clock after the interrupt is due (when the output is free), so with
// MOD_COUNT 0 it is high in the second clock after the entry's int_valid
// clock, and with MOD_TIME t (the count not reached) in the clock t + 1
// after the first entry's. A message taken out is no longer owed; a
// message waiting on irq_ready stays as it is (mask and enable act on the
// next ones).
//
// Parameters: VEC_W as rnic_dev's; N_SRC, the entry sources.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_irq #(
    parameter VEC_W = 2,
    parameter N_SRC = 2
) (
    input  wire                   clk,
    input  wire                   rst,

    input  wire                   vec_req,
    input  wire [7:0]             vec_addr,
    input  wire                   vec_req_is_wr,
    input  wire [31:0]            vec_wr_data,
    input  wire [31:0]            vec_wr_biten,
    output wire                   vec_rd_ack,
    output wire [31:0]            vec_rd_data,
    output wire                   vec_wr_ack,

    input  wire [N_SRC-1:0]       int_valid,
    input  wire [N_SRC*VEC_W-1:0] int_vector,

    output wire                   irq_valid,
    input  wire                   irq_ready,
    output wire [VEC_W-1:0]       irq_vector
);
initial begin
    if (VEC_W < 1 || VEC_W > 4 || N_SRC < 1 || N_SRC > 8) begin
        $error("rnic_irq: VEC_W must be 1 to 4 and N_SRC 1 to 8, got %0d, %0d", VEC_W, N_SRC);
        $finish;
    end
end

localparam VECS = 1 << VEC_W;

reg [VECS-1:0] en_reg, mask_reg, pend_reg, owe_reg;
// Per vector v, packed (Yosys then keeps them as plain registers):
// MOD_COUNT, MOD_TIME, the unsignalled entries, the age.
reg [VECS*16-1:0] modc_reg, u_reg;
reg [VECS*32-1:0] modt_reg, age_reg;
reg            out_valid_reg;
reg [VEC_W-1:0] out_vec_reg, rr_reg;

// The register access.
wire [1:0] fn = vec_addr[7:6];   // (vec_addr[1:0]: 32-bit registers, always 0)
/* verilator lint_off UNUSEDSIGNAL */
wire [1:0] addr_lo = vec_addr[1:0];
/* verilator lint_on UNUSEDSIGNAL */
wire [3:0] rv = vec_addr[5:2];
wire [VEC_W-1:0] rvi = rv[VEC_W-1:0];
wire rv_ok = VEC_W == 4 || rv < VECS;
wire wr = vec_req && vec_req_is_wr && rv_ok;

function automatic [15:0] merge16_f(input [15:0] old, input [15:0] data, input [15:0] biten);
    merge16_f = (old & ~biten) | (data & biten);
endfunction
function automatic [31:0] merge_f(input [31:0] old, input [31:0] data, input [31:0] biten);
    merge_f = (old & ~biten) | (data & biten);
endfunction

reg [31:0] rd_data;
always @* begin
    rd_data = 32'd0;
    if (rv_ok) begin
        case (fn)
        2'd0: rd_data = {30'd0, mask_reg[rvi], en_reg[rvi]};
        2'd1: rd_data = {16'd0, modc_reg[rvi * 16 +: 16]};
        2'd2: rd_data = modt_reg[rvi * 32 +: 32];
        default: rd_data = {31'd0, pend_reg[rvi]};
        endcase
    end
end
assign vec_rd_ack = vec_req && !vec_req_is_wr;
assign vec_rd_data = rd_data;
assign vec_wr_ack = vec_req && vec_req_is_wr;

// The entries of each vector this clock.
reg [VECS*4-1:0] inc;
integer a, i;
always @* begin
    for (a = 0; a < VECS; a = a + 1) begin
        inc[a * 4 +: 4] = 4'd0;
        for (i = 0; i < N_SRC; i = i + 1) begin
            if (int_valid[i] && int_vector[i * VEC_W +: VEC_W] == a[VEC_W-1:0]) inc[a * 4 +: 4] = inc[a * 4 +: 4] + 4'd1;
        end
    end
end

// The next message: the first owed, enabled, unmasked vector after the
// last one sent.
wire [VECS-1:0] ready_vecs = owe_reg & en_reg & ~mask_reg;
reg             pick_valid;
reg [VEC_W-1:0] pick;
reg [VEC_W-1:0] cand;
integer b;
always @* begin
    pick_valid = 1'b0;
    pick = {VEC_W{1'b0}};
    cand = {VEC_W{1'b0}};
    for (b = VECS; b >= 1; b = b - 1) begin
        cand = rr_reg + b[VEC_W-1:0];
        if (ready_vecs[cand]) begin
            pick_valid = 1'b1;
            pick = cand;
        end
    end
end
wire load = (!out_valid_reg || irq_ready) && pick_valid;

// Each vector's count after this clock's entries, and whether its
// interrupt is due at this clock.
reg [16:0]        u_sum;
reg [VECS*16-1:0] u_new;
reg [VECS-1:0]    due;
reg [15:0]        mc;
integer           c;
always @* begin
    for (c = 0; c < VECS; c = c + 1) begin
        u_sum = {1'b0, u_reg[c * 16 +: 16]} + {13'd0, inc[c * 4 +: 4]};
        u_new[c * 16 +: 16] = u_sum[16] ? 16'hffff : u_sum[15:0];   // saturates
        mc = modc_reg[c * 16 +: 16] == 16'd0 ? 16'd1 : modc_reg[c * 16 +: 16];
        due[c] = (u_new[c * 16 +: 16] != 16'd0 && u_new[c * 16 +: 16] >= mc) ||
                 (u_reg[c * 16 +: 16] != 16'd0 && modt_reg[c * 32 +: 32] != 32'd0 &&
                  {1'b0, age_reg[c * 32 +: 32]} + 33'd1 >= {1'b0, modt_reg[c * 32 +: 32]});
    end
end

integer v;
always @(posedge clk) begin
    if (!out_valid_reg || irq_ready) out_valid_reg <= 1'b0;
    if (load) begin
        out_valid_reg <= 1'b1;
        out_vec_reg <= pick;
        rr_reg <= pick;
        owe_reg[pick] <= 1'b0;
    end
    for (v = 0; v < VECS; v = v + 1) begin
        if (due[v]) begin
            u_reg[v * 16 +: 16] <= 16'd0;
            pend_reg[v] <= 1'b1;
            if (en_reg[v]) owe_reg[v] <= 1'b1;
        end else begin
            u_reg[v * 16 +: 16] <= u_new[v * 16 +: 16];
            if (u_reg[v * 16 +: 16] == 16'd0) age_reg[v * 32 +: 32] <= 32'd0;
            else if (age_reg[v * 32 +: 32] != 32'hffff_ffff) age_reg[v * 32 +: 32] <= age_reg[v * 32 +: 32] + 32'd1;
        end
        if (wr && rvi == v[VEC_W-1:0]) begin
            case (fn)
            2'd0: begin
                if (vec_wr_biten[0]) en_reg[v] <= vec_wr_data[0];
                if (vec_wr_biten[1]) mask_reg[v] <= vec_wr_data[1];
            end
            2'd1: modc_reg[v * 16 +: 16] <= merge16_f(modc_reg[v * 16 +: 16], vec_wr_data[15:0], vec_wr_biten[15:0]);
            2'd2: modt_reg[v * 32 +: 32] <= merge_f(modt_reg[v * 32 +: 32], vec_wr_data, vec_wr_biten);
            default: if (vec_wr_biten[0] && vec_wr_data[0] && !due[v]) pend_reg[v] <= 1'b0;
            endcase
        end
        if (!en_reg[v]) owe_reg[v] <= 1'b0;
    end
    if (rst) begin
        en_reg <= {VECS{1'b0}};
        mask_reg <= {VECS{1'b0}};
        pend_reg <= {VECS{1'b0}};
        owe_reg <= {VECS{1'b0}};
        out_valid_reg <= 1'b0;
        rr_reg <= {VEC_W{1'b1}};   // vector 0 first
        modc_reg <= {(VECS * 16){1'b0}};
        modt_reg <= {(VECS * 32){1'b0}};
        u_reg <= {(VECS * 16){1'b0}};
        age_reg <= {(VECS * 32){1'b0}};
    end
end

assign irq_valid = out_valid_reg;
assign irq_vector = out_vec_reg;

endmodule

`resetall
