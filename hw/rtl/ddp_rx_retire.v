// ddp_rx_retire: stages D2 to D4 of ddp_rx's placement, the end of a
// placed piece (hw/rtl/ddp_rx.v has the map of the stages; ddp_rx_place
// instantiates this stage behind its D1).
//
// D2 takes a piece when D1 ends it (d_end_w, with D1's registers and the
// piece's octet count). A ULPDU's last piece leaves D2 with its delivery
// record (e2_*, into the record queue: rf_in_ready); an early ULPDU has
// none. Any other piece goes on to D3 and D4, which work out where the
// ULPDU's next piece goes on and write it to the placement context
// (e4_nxt, e4_left with e4_*, by ddp_rx_tables while d4_valid_reg).
//
// Interface: d2_free tells D1 that D2 takes a piece this clock (D2 is
// empty, or its piece leaves now); every output is a register but d2_free
// and e4_nxt, e4_left (picked from D4's registers).
//
// Cycle behaviour: a piece spends one clock in D2 unless the record queue
// holds its last piece back; D3 and D4 follow D2 one clock each, always.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx_retire #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter RQ_AW = 3,
    parameter ADDR_W = 64,
    parameter ID_W = 32,
    parameter BURST = 8,
    parameter BQ_AW = 4
) (
    clk,
    rst,
    rf_in_ready,
    d_end_w,
    d_end_last,
    d_en_reg,
    d_early_reg,
    d_place_reg,
    d_conn_reg,
    d_dest_reg,
    d_s_reg,
    d_octs,
    d_remain_reg,
    d_rec_reg,
    d_rr_step,
    d2_free,
    d2_valid_reg,
    d3_valid_reg,
    d4_valid_reg,
    e2_last_reg,
    e2_en_reg,
    e2_early_reg,
    e2_conn_reg,
    e2_rec_reg,
    e2_rr_reg,
    e4_place_reg,
    e4_conn_reg,
    e4_rec_reg,
    e4_rr_reg,
    e4_nxt,
    e4_left
);

`include "ddp_rx_defs.vh"

// Ports (declared after the localparams of ddp_rx_defs.vh their widths use).
input  wire                        clk;
input  wire                        rst;
input  wire                        rf_in_ready;
input  wire                        d_end_w;       // D1 ends its piece this clock
input  wire                        d_end_last;    // ... and it is its ULPDU's last
input  wire                        d_en_reg;
input  wire                        d_early_reg;
input  wire                        d_place_reg;
input  wire [CONN_W-1:0]           d_conn_reg;
input  wire [ADDR_W-1:0]           d_dest_reg;
input  wire [4:0]                  d_s_reg;
input  wire [16:0]                 d_octs;        // octets of the piece
input  wire [15:0]                 d_remain_reg;
input  wire [RECC_W-1:0]           d_rec_reg;
input  wire [223:0]                d_rr_step;     // the Read Request's body, as captured
output wire                        d2_free;
output reg                         d2_valid_reg = 1'b0;
output reg                         d3_valid_reg = 1'b0;
output reg                         d4_valid_reg = 1'b0;
output reg                         e2_last_reg;
output reg                         e2_en_reg;
output reg                         e2_early_reg;
output reg  [CONN_W-1:0]           e2_conn_reg;
output reg  [RECC_W-1:0]           e2_rec_reg;
output reg  [223:0]                e2_rr_reg;
output reg                         e4_place_reg;
output reg  [CONN_W-1:0]           e4_conn_reg;
output reg  [RECC_W-1:0]           e4_rec_reg;
output reg  [223:0]                e4_rr_reg;
output reg  [ADDR_W-1:0]           e4_nxt;
output reg  [15:0]                 e4_left;

reg                    d2_valid_next;
reg                    e2_last_next;
reg                    e2_en_next;
reg                    e2_early_next;
reg [CONN_W-1:0]       e2_conn_next;
reg [RECC_W-1:0]       e2_rec_next;
reg [223:0]            e2_rr_next;
reg                    d3_valid_next;
reg                    d4_valid_next;
reg                    e4_place_next;
reg [CONN_W-1:0]       e4_conn_next;
reg [RECC_W-1:0]       e4_rec_next;
reg [223:0]            e4_rr_next;

// D2: the piece's end. Payload octets of the piece are those past the
// header, up to the end of the ULPDU's payload; a piece that does not end
// its ULPDU leaves the placement context for the next one, a last piece
// queues the ULPDU's delivery record.
reg                    e2_place_reg, e2_place_next;
reg [ADDR_W-1:0]       e2_dest_reg, e2_dest_next;
reg [4:0]              e2_s_reg, e2_s_next;
reg [16:0]             e2_octs_reg, e2_octs_next;
reg [15:0]             e2_remain_reg, e2_remain_next;
reg [32:0]             e2_diff;          // {octs >= s, octs - s}
// An early ULPDU has no delivery record (and takes no verdict).
wire                   d2_done = d2_valid_reg && (!e2_last_reg || e2_early_reg || rf_in_ready);

assign d2_free = !d2_valid_reg || d2_done;

always @* begin
    e2_diff = fadd({15'd0, e2_octs_reg}, {27'h7ffffff, ~e2_s_reg}, 1'b1);
end

// D3, for a piece that does not end its ULPDU: the payload octets it
// placed, pay = min(max(octs - s, 0), remain), and where the next piece of
// the ULPDU goes on (dest + pay). D3 works out the sums (the low 17 bits
// of dest + diff and dest + remain with their carries, remain - diff,
// diff > remain, and dest's high bits + 1), D4 picks them and writes the
// placement context.
reg                    e3_place_reg, e3_place_next;
reg                    e3_pos_reg, e3_pos_next;
reg [CONN_W-1:0]       e3_conn_reg, e3_conn_next;
reg [ADDR_W-1:0]       e3_dest_reg, e3_dest_next;
reg [15:0]             e3_remain_reg, e3_remain_next;
reg [16:0]             e3_diff_reg, e3_diff_next;
reg [RECC_W-1:0]       e3_rec_reg, e3_rec_next;
reg [223:0]            e3_rr_reg, e3_rr_next;
wire [ADDR_W-18:0]     e3_hi1;
rnic_incdec #(.W(ADDR_W-17), .DEC(0)) u_e3_hi1 (.x(e3_dest_reg[ADDR_W-1:17]), .y(e3_hi1));

reg                    e4_pos_reg, e4_pos_next;
reg                    e4_big_reg, e4_big_next;
reg [ADDR_W-1:0]       e4_dest_reg, e4_dest_next;
reg [ADDR_W-18:0]      e4_hi1_reg, e4_hi1_next;
reg [32:0]             e4_nd_reg, e4_nd_next;     // (bits 17..0 used)
reg [32:0]             e4_nr_reg, e4_nr_next;
reg [15:0]             e4_remain_reg, e4_remain_next;
reg [15:0]             e4_rd_reg, e4_rd_next;
wire [32:0]            e3_rd = fadd({16'd0, e3_remain_reg}, {15'h7fff, ~e3_diff_reg}, 1'b1);

always @* begin
    e4_nxt = e4_dest_reg;
    e4_left = e4_remain_reg;
    if (e4_pos_reg && e4_big_reg) begin
        e4_nxt = {e4_nr_reg[17] ? e4_hi1_reg : e4_dest_reg[ADDR_W-1:17], e4_nr_reg[16:0]};
        e4_left = 16'd0;
    end else if (e4_pos_reg) begin
        e4_nxt = {e4_nd_reg[17] ? e4_hi1_reg : e4_dest_reg[ADDR_W-1:17], e4_nd_reg[16:0]};
        e4_left = e4_rd_reg;
    end
    if (!e4_place_reg) begin
        e4_nxt = e4_dest_reg;
    end
end

always @* begin
    d3_valid_next = d2_done && !e2_last_reg;
    e3_place_next = e2_place_reg;
    e3_pos_next = e2_diff[32] && e2_diff[16:0] != 17'd0;
    e3_conn_next = e2_conn_reg;
    e3_dest_next = e2_dest_reg;
    e3_remain_next = e2_remain_reg;
    e3_diff_next = e2_diff[16:0];
    e3_rec_next = e2_rec_reg;
    e3_rr_next = e2_rr_reg;
    d4_valid_next = d3_valid_reg;
    e4_place_next = e3_place_reg;
    e4_pos_next = e3_pos_reg;
    e4_big_next = gt33({16'd0, e3_diff_reg}, {17'd0, e3_remain_reg});
    e4_conn_next = e3_conn_reg;
    e4_dest_next = e3_dest_reg;
    e4_hi1_next = e3_hi1;
    e4_nd_next = fadd({15'd0, e3_dest_reg[16:0]}, {15'd0, e3_diff_reg}, 1'b0);
    e4_nr_next = fadd({15'd0, e3_dest_reg[16:0]}, {16'd0, e3_remain_reg}, 1'b0);
    e4_remain_next = e3_remain_reg;
    e4_rd_next = e3_rd[15:0];
    e4_rec_next = e3_rec_reg;
    e4_rr_next = e3_rr_reg;
end

always @(posedge clk) begin
    d3_valid_reg <= d3_valid_next;
    e3_place_reg <= e3_place_next;
    e3_pos_reg <= e3_pos_next;
    e3_conn_reg <= e3_conn_next;
    e3_dest_reg <= e3_dest_next;
    e3_remain_reg <= e3_remain_next;
    e3_diff_reg <= e3_diff_next;
    e3_rec_reg <= e3_rec_next;
    e3_rr_reg <= e3_rr_next;
    d4_valid_reg <= d4_valid_next;
    e4_place_reg <= e4_place_next;
    e4_pos_reg <= e4_pos_next;
    e4_big_reg <= e4_big_next;
    e4_conn_reg <= e4_conn_next;
    e4_dest_reg <= e4_dest_next;
    e4_hi1_reg <= e4_hi1_next;
    e4_nd_reg <= e4_nd_next;
    e4_nr_reg <= e4_nr_next;
    e4_remain_reg <= e4_remain_next;
    e4_rd_reg <= e4_rd_next;
    e4_rec_reg <= e4_rec_next;
    e4_rr_reg <= e4_rr_next;
    if (rst) begin
        d3_valid_reg <= 1'b0;
        d4_valid_reg <= 1'b0;
    end
end

always @* begin
    d2_valid_next = d2_valid_reg;
    e2_last_next = e2_last_reg;
    e2_en_next = e2_en_reg;
    e2_early_next = e2_early_reg;
    e2_place_next = e2_place_reg;
    e2_conn_next = e2_conn_reg;
    e2_dest_next = e2_dest_reg;
    e2_s_next = e2_s_reg;
    e2_octs_next = e2_octs_reg;
    e2_remain_next = e2_remain_reg;
    e2_rec_next = e2_rec_reg;
    e2_rr_next = e2_rr_reg;
    if (d_end_w) begin
        d2_valid_next = 1'b1;
        e2_last_next = d_end_last;
        e2_en_next = d_en_reg;
        e2_early_next = d_early_reg;
        e2_place_next = d_place_reg;
        e2_conn_next = d_conn_reg;
        e2_dest_next = d_dest_reg;
        e2_s_next = d_s_reg;
        e2_octs_next = d_octs;
        e2_remain_next = d_remain_reg;
        e2_rec_next = d_rec_reg;
        e2_rr_next = d_rr_step;
    end else if (d2_done) begin
        d2_valid_next = 1'b0;
    end
end

always @(posedge clk) begin
    d2_valid_reg <= d2_valid_next;
    e2_last_reg <= e2_last_next;
    e2_en_reg <= e2_en_next;
    e2_early_reg <= e2_early_next;
    e2_place_reg <= e2_place_next;
    e2_conn_reg <= e2_conn_next;
    e2_dest_reg <= e2_dest_next;
    e2_s_reg <= e2_s_next;
    e2_octs_reg <= e2_octs_next;
    e2_remain_reg <= e2_remain_next;
    e2_rec_reg <= e2_rec_next;
    e2_rr_reg <= e2_rr_next;
    if (rst) begin
        d2_valid_reg <= 1'b0;
    end
end

// Not needed here: e2_diff[31:17], e3_rd[32:16], e4_nd_reg[32:18], e4_nr_reg[32:18].
wire unused_ok = &{1'b0, e2_diff[31:17], e3_rd[32:16], e4_nd_reg[32:18], e4_nr_reg[32:18]};
endmodule

`resetall
