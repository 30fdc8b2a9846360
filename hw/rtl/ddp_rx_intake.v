// ddp_rx_intake: ddp_rx's intake stage (hw/rtl/ddp_rx.v has the interface
// and the map of the stages).
//
// Takes s_axis (the ULPDU pieces) one beat a clock into df_fifo (16 beats,
// {data, keep, tlast, ULPDU last}: placement reads them) and, per piece, a
// header record (tuser, octets 0..17, the payload length; HF in
// ddp_rx_defs.vh) into hf_fifo once the header is in: at the piece's first
// beat for W >= 256, after HB beats below. At W=64 a first piece's beat 0
// (header octets only) is not queued for placement unless it ends the piece
// (DROP0). s_axis_tready is low while a configuration request waits at a
// piece's start (cfg_pending, from ddp_rx_tables) and while either queue is
// full.
//
// Out: df_out*/hf_out* (the two queues' heads) and hf_* (the record the
// checks take when hf_fifo is empty and they move: ddp_rx_check's H).
// Cycle behaviour: a beat in at clock t is at df_fifo's head at t + 1; a
// header record goes to hf_fifo at the clock its header's last beat comes.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx_intake #(
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
    s_axis_tdata,
    s_axis_tkeep,
    s_axis_tvalid,
    s_axis_tlast,
    s_axis_tuser,
    s_conn_valid,
    s_stag_valid,
    s_post_valid,
    cf_post_reg,
    clr_busy_reg,
    df_out_ready,
    c_adv,
    s_axis_tready,
    i_inpiece_reg,
    df_out,
    df_out_valid,
    hf_out_valid,
    h_valid,
    h_rec
);
reg i_inpiece_next;

`include "ddp_rx_defs.vh"

// Ports (declared after the localparams of ddp_rx_defs.vh their widths use).
input  wire                        clk;
input  wire                        rst;
input  wire [DATA_W-1:0]           s_axis_tdata;
input  wire [DATA_W/8-1:0]         s_axis_tkeep;
input  wire                        s_axis_tvalid;
input  wire                        s_axis_tlast;
input  wire [CONN_W+19-1:0]        s_axis_tuser;
input  wire                        s_conn_valid;
input  wire                        s_stag_valid;
input  wire                        s_post_valid;
input  wire                        cf_post_reg;
input  wire                        clr_busy_reg;
input  wire                        df_out_ready;
input  wire                        c_adv;
output wire                        s_axis_tready;
output reg                         i_inpiece_reg = 1'b0;
output wire [DF_W-1:0]             df_out;
output wire                        df_out_valid;
output wire                        hf_out_valid;
output wire                        h_valid;
output wire [HF_W-1:0]             h_rec;

wire [1:0]            fifo_ready2_unused;   // second push ports not used

// --- intake: beats into df_fifo, one header record per piece into hf_fifo ----

wire                 cfg_pending = s_conn_valid || s_stag_valid || s_post_valid || cf_post_reg;

reg  [1:0]           i_hcnt_reg = 2'd0, i_hcnt_next;       // header beats taken (saturates at HB)
reg                  i_hdone_reg = 1'b0, i_hdone_next;      // the piece's header record is out
reg  [143:0]         i_hdr_reg = 144'd0, i_hdr_next;
reg  [17+CONN_W:0]   i_user_reg = 0, i_user_next;          // {early, ulen, conn, first}

wire                 df_in_ready;
wire                 hf_in_ready;
// Configuration waits for the pipeline to drain and is taken between
// pieces: no new piece starts while one is waiting, nor while the tables
// are cleared after reset (clr_busy_reg, ddp_rx_tables).
wire                 i_hold = !i_inpiece_reg && (cfg_pending || clr_busy_reg);
assign s_axis_tready = df_in_ready && hf_in_ready && !i_hold;
wire                 i_take = s_axis_tvalid && s_axis_tready;

// An early piece is a whole ULPDU: first and last whatever tuser says.
wire                 i_early = s_axis_tuser[CONN_W+18];
wire [17+CONN_W:0]   i_user = i_inpiece_reg ? i_user_reg : {s_axis_tuser[CONN_W+18:2], s_axis_tuser[1] || i_early};
wire                 i_ulast = s_axis_tuser[0] || (i_inpiece_reg ? i_user_reg[17+CONN_W] : i_early);
wire [1:0]           i_hcnt = i_inpiece_reg ? i_hcnt_reg : 2'd0;
wire                 i_hdone = i_inpiece_reg && i_hdone_reg;
reg  [143:0]         i_hdr;
reg                  i_hpush;
// The payload length, n = ulen - header length (14 or 18 octets by the T
// bit, octet 0 bit 7: RFC 5041 4.2, 4.3), and short = ulen < header
// length, from the first beat's tuser and T, kept for the later beats.
wire [15:0]          i_ulen_t = s_axis_tuser[CONN_W+17:CONN_W+2];
wire [32:0]          i_n14_t = fadd({16'd0, i_ulen_t}, 32'h0000fff1, 1'b1);
wire [32:0]          i_n18_t = fadd({16'd0, i_ulen_t}, 32'h0000ffed, 1'b1);
wire                 i_t_t = s_axis_tdata[7];
wire [16:0]          i_ns_t = i_t_t ? {i_ulen_t < 16'd14, i_n14_t[15:0]} : {i_ulen_t < 16'd18, i_n18_t[15:0]};
reg  [16:0]          i_ns_reg = 17'd0, i_ns_next;       // {short, n}
wire [16:0]          i_ns = i_inpiece_reg ? i_ns_reg : i_ns_t;
// Beat 0 of a first piece that goes on (W=64): header only, so it goes
// into the header record but not into df_fifo; the record says so (drop)
// and placement counts the piece from its beat 1, as if its header were
// KEEP_W octets shorter (C1's h_hlen).
reg                  i_drop_reg = 1'b0, i_drop_next;
wire                 i_drop0 = DROP0 != 0 && !i_inpiece_reg && i_user[0] && !s_axis_tlast;
wire                 i_drop = i_inpiece_reg ? i_drop_reg : i_drop0;

always @* begin : intake_hdr
    integer o;
    i_hdr = i_inpiece_reg ? i_hdr_reg : 144'd0;
    for (o = 0; o < 18; o = o + 1) begin
        if ({30'd0, i_hcnt} == o / KEEP_W) begin
            i_hdr[8*o +: 8] = s_axis_tdata[8*(o % KEEP_W) +: 8];
        end
    end
    // A later piece's record goes out with its first beat; a first
    // piece's once its header is in (or at its end, if shorter): 18
    // octets, or 14 when it is tagged (T, octet 0 bit 7; octets 14..17 of
    // the record are then payload or zero, and no check of a tagged
    // segment reads them).
    i_hpush = i_take && !i_hdone && (!i_user[0] || s_axis_tlast || {30'd0, i_hcnt} == HB - 1
                                     || (i_hdr[7] && {30'd0, i_hcnt} == HBT - 1));
end

always @* begin
    i_inpiece_next = i_inpiece_reg;
    i_user_next = i_user_reg;
    i_hdr_next = i_hdr_reg;
    i_hcnt_next = i_hcnt_reg;
    i_hdone_next = i_hdone_reg;
    i_ns_next = i_ns_reg;
    i_drop_next = i_drop_reg;
    if (i_take) begin
        i_inpiece_next = !s_axis_tlast;
        i_user_next = i_user;
        i_hdr_next = i_hdr;
        i_hcnt_next = ({30'd0, i_hcnt} == HB) ? i_hcnt : i_hcnt + 2'd1;
        i_hdone_next = i_hdone || i_hpush;
        i_ns_next = i_ns;
        i_drop_next = i_drop;
    end
end

always @(posedge clk) begin
    i_inpiece_reg <= i_inpiece_next;
    i_user_reg <= i_user_next;
    i_hdr_reg <= i_hdr_next;
    i_hcnt_reg <= i_hcnt_next;
    i_hdone_reg <= i_hdone_next;
    i_ns_reg <= i_ns_next;
    i_drop_reg <= i_drop_next;
    if (rst) begin
        i_inpiece_reg <= 1'b0;
        i_hcnt_reg <= 2'd0;
        i_hdone_reg <= 1'b0;
    end
end


ddp_rx_fifo #(.WIDTH(DF_W), .AW(4)) df_fifo (
    .clk(clk), .rst(rst),
    .in_data({s_axis_tdata, s_axis_tkeep, s_axis_tlast, i_ulast}), .in_valid(i_take && !i_drop0),
    .in_data2({s_axis_tdata, s_axis_tkeep, s_axis_tlast, i_ulast}), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused[0]),
    .in_ready(df_in_ready),
    .out_data(df_out), .out_valid(df_out_valid), .out_ready(df_out_ready)
);

wire [HF_W-1:0]      hf_out;

// The record of the piece at H: hf_fifo's head, or, when hf_fifo is empty
// and the check pipeline moves, the record being made (h_thru: it goes
// straight on to C1 and never into hf_fifo, a clock saved).
wire [HF_W-1:0]      i_rec = {i_drop, i_user[17+CONN_W], i_ns, i_user[16+CONN_W:0], i_hdr};
wire                 h_thru = i_hpush && !hf_out_valid && c_adv;
assign h_valid = hf_out_valid || i_hpush;
assign h_rec = hf_out_valid ? hf_out : i_rec;

ddp_rx_fifo #(.WIDTH(HF_W), .AW(3)) hf_fifo (
    .clk(clk), .rst(rst),
    .in_data(i_rec), .in_valid(i_hpush && !h_thru),
    .in_data2(i_rec), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused[1]),
    .in_ready(hf_in_ready),
    .out_data(hf_out), .out_valid(hf_out_valid), .out_ready(c_adv)
);

// Not needed here: i_n14_t[32:16], i_n18_t[32:16], fifo_ready2_unused.
wire unused_ok = &{1'b0, i_n14_t[32:16], i_n18_t[32:16], fifo_ready2_unused};
endmodule

`resetall
