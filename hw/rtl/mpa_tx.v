// mpa_tx: the MPA transmitter. ULPDUs (DDP segments) in, FPDUs out, octet
// for octet what iwarp/mpa's Framer sends (RFC 5044 4): ULPDU_Length, the
// ULPDU, pad, markers every 512 octets of sequence space with their FPDUPTRs,
// and the CRC32c over all of it.
//
//   s_axis -> mpa_tx_frame -> mpa_tx_mark -> +-> crc32c ------+-> merge -> m_axis
//             length, pad,    markers, per   |   (CRC of the   |   CRC into its
//             CRC place       connection     +-> FIFO ---------+   placeholder
//
// Input, s_axis: one frame per ULPDU, lane-0 aligned (every beat full but
// the last, whose tkeep is a run from lane 0). tuser, sampled on the first
// beat: {crc_en, mrk_en, conn[CONN_W-1:0], len[15:0]}:
//   len     the ULPDU's length in octets, 1 .. 64768;
//   conn    the connection, which picks the marker position from the table;
//   mrk_en  markers on for this half connection (negotiated in the MPA
//           startup, RFC 5044 7.1.2);
//   crc_en  CRC on; when off the CRC field is zero (4.1 allows any value).
//
// Output, m_axis: one frame per FPDU, lane-0 aligned, a multiple of four
// octets: a marker first if one falls there, then ULPDU_Length. tuser = conn.
// tlast ends every FPDU, so a TCP transmitter can cut segments at FPDU
// boundaries (RFC 5044 8: an FPDU should not span TCP segments).
//
// Connection table (marker positions): cfg_* as in mpa_tx_mark, where
// cfg_pos = ((sequence number of the next FPDU - marker base) mod 512) / 4,
// 0 at the start of Full Operation.
//
// Errors: err_valid/err_code as in mpa_tx_frame (err_code bit 0: length 0
// or over 64768, frame dropped; bit 1: frame length differs from len).
//
// Throughput: one output beat per clock with FPDUs back to back; the input
// waits while markers, headers, pad and CRC take output beats of their own.
// Latency: from the first input beat to the first output beat, LATENCY
// clocks for a frame that needs not wait for its CRC, i.e. unless its last
// beat is among its first few (single-beat FPDUs wait for the CRC: 13).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mpa_tx #(
    parameter DATA_W = 64,
    parameter CONN_W = 10
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [DATA_W-1:0]     s_axis_tdata,
    input  wire [DATA_W/8-1:0]   s_axis_tkeep,
    input  wire                  s_axis_tvalid,
    output wire                  s_axis_tready,
    input  wire                  s_axis_tlast,
    input  wire [CONN_W+17:0]    s_axis_tuser,

    input  wire                  cfg_valid,
    output wire                  cfg_ready,
    input  wire [CONN_W-1:0]     cfg_conn,
    input  wire [6:0]            cfg_pos,

    output reg  [DATA_W-1:0]     m_axis_tdata,
    output reg  [DATA_W/8-1:0]   m_axis_tkeep,
    output reg                   m_axis_tvalid,
    input  wire                  m_axis_tready,
    output reg                   m_axis_tlast,
    output reg  [CONN_W-1:0]     m_axis_tuser,

    output wire                  err_valid,
    output wire [1:0]            err_code
);

localparam L = DATA_W / 8;
localparam WPB = DATA_W / 32;
localparam USER_W = CONN_W + 2;
localparam FIFO_AW = 4;   // must hold more beats than crc32c's latency
localparam CRC_LATENCY = 7;  // crc32c: clocks from a tlast beat to its result
localparam FIFO_W = DATA_W + L + WPB + 1 + USER_W;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("mpa_tx: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
end

// --- framing and markers -----------------------------------------------------

wire [DATA_W-1:0] f_data;
wire [L-1:0]      f_keep;
wire              f_valid, f_ready, f_last, f_first;
wire [USER_W-1:0] f_user;
wire [WPB-1:0]    f_crcw;

mpa_tx_frame #(.DATA_W(DATA_W), .USER_W(USER_W)) frame (
    .clk(clk), .rst(rst),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep),
    .s_axis_tvalid(s_axis_tvalid), .s_axis_tready(s_axis_tready),
    .s_axis_tlast(s_axis_tlast), .s_axis_tuser(s_axis_tuser),
    .m_axis_tdata(f_data), .m_axis_tkeep(f_keep), .m_axis_tvalid(f_valid),
    .m_axis_tready(f_ready), .m_axis_tlast(f_last), .m_axis_tuser(f_user),
    .m_axis_tfirst(f_first), .m_axis_tcrcw(f_crcw),
    .err_valid(err_valid), .err_code(err_code)
);

wire [DATA_W-1:0] k_data;
wire [L-1:0]      k_keep;
wire              k_valid, k_ready, k_last;
wire [USER_W-1:0] k_user;
wire [WPB-1:0]    k_crcw;

mpa_tx_mark #(.DATA_W(DATA_W), .CONN_W(CONN_W)) mark (
    .clk(clk), .rst(rst),
    .s_axis_tdata(f_data), .s_axis_tkeep(f_keep), .s_axis_tvalid(f_valid),
    .s_axis_tready(f_ready), .s_axis_tlast(f_last), .s_axis_tuser(f_user),
    .s_axis_tfirst(f_first), .s_axis_tcrcw(f_crcw),
    .cfg_valid(cfg_valid), .cfg_ready(cfg_ready), .cfg_conn(cfg_conn), .cfg_pos(cfg_pos),
    .m_axis_tdata(k_data), .m_axis_tkeep(k_keep), .m_axis_tvalid(k_valid),
    .m_axis_tready(k_ready), .m_axis_tlast(k_last), .m_axis_tuser(k_user),
    .m_axis_tcrcw(k_crcw)
);

// --- CRC, with the FPDU waiting in a FIFO for it -------------------------------

// The CRC covers every octet of the FPDU but its placeholder (RFC 5044 4.4).
reg [L-1:0] crc_keep;
integer i;
always @* begin
    for (i = 0; i < L; i = i + 1) begin
        crc_keep[i] = k_keep[i] && !k_crcw[i / 4];
    end
end

wire crc_in_ready;
reg [FIFO_AW:0] wr_ptr, rd_ptr;
// The beats in the FIFO (wr_ptr - rd_ptr), kept in a register of its own:
// worked out from the pointers, the sum led the ready path back through
// mpa_tx_mark into mpa_tx_frame (hw/timing.md).
reg [FIFO_AW:0] fill;
wire fifo_full = fill[FIFO_AW];
wire fifo_empty = fill == {FIFO_AW+1{1'b0}};
assign k_ready = crc_in_ready && !fifo_full;
wire push = k_valid && k_ready;

wire [31:0] crc_data;
wire        crc_valid;
wire        crc_ready;
wire        crc_tid_unused;

crc32c #(.DATA_W(DATA_W), .ID_W(1)) crc (
    .clk(clk), .rst(rst),
    .s_axis_tdata(k_data), .s_axis_tkeep(crc_keep),
    .s_axis_tvalid(k_valid && !fifo_full), .s_axis_tready(crc_in_ready),
    .s_axis_tlast(k_last), .s_axis_tid(1'b0), .s_axis_tuser({32'd0, 1'b1}),
    .m_axis_crc_tdata(crc_data), .m_axis_crc_tid(crc_tid_unused), .m_axis_crc_tvalid(crc_valid),
    .m_axis_crc_tready(crc_ready)
);

reg [FIFO_W-1:0] fifo [0:(1 << FIFO_AW) - 1];
always @(posedge clk) begin
    if (push) begin
        fifo[wr_ptr[FIFO_AW-1:0]] <= {k_user, k_last, k_crcw, k_keep, k_data};
    end
end

wire [FIFO_W-1:0] head = fifo[rd_ptr[FIFO_AW-1:0]];
wire [DATA_W-1:0] h_data = head[DATA_W-1:0];
wire [L-1:0]      h_keep = head[DATA_W +: L];
wire [WPB-1:0]    h_crcw = head[DATA_W+L +: WPB];
wire              h_last = head[DATA_W+L+WPB];
wire [USER_W-1:0] h_user = head[DATA_W+L+WPB+1 +: USER_W];
wire              h_crc_en = h_user[CONN_W+1];

// A frame's last beat leaves with its CRC. The others leave once the FIFO
// holds as many beats as the CRC takes clocks (a frame's last beat then
// reaches the head just as its CRC comes out), or once the head frame's CRC
// is ready: started any sooner, a frame would stall at its last beat and
// leave a gap in the output; started later, results would pile up in
// crc32c's 8-deep buffer and stop its input.
wire out_load = !m_axis_tvalid || m_axis_tready;
wire primed = crc_valid || fill >= CRC_LATENCY;
wire pop = !fifo_empty && out_load && (h_last ? crc_valid : primed);
assign crc_ready = pop && h_last;

reg [DATA_W-1:0] merged;
integer w;
always @* begin
    for (w = 0; w < WPB; w = w + 1) begin
        merged[32*w +: 32] = (h_crcw[w] && h_crc_en) ? crc_data : h_data[32*w +: 32];
    end
end

always @(posedge clk) begin
    if (push) begin
        wr_ptr <= wr_ptr + 1'b1;
    end
    fill <= fill + {{FIFO_AW{1'b0}}, push} - {{FIFO_AW{1'b0}}, pop};
    if (out_load) begin
        m_axis_tvalid <= 1'b0;
    end
    if (pop) begin
        rd_ptr <= rd_ptr + 1'b1;
        m_axis_tvalid <= 1'b1;
        m_axis_tdata <= merged;
        m_axis_tkeep <= h_keep;
        m_axis_tlast <= h_last;
        m_axis_tuser <= h_user[CONN_W-1:0];
    end
    if (rst) begin
        wr_ptr <= {FIFO_AW+1{1'b0}};
        rd_ptr <= {FIFO_AW+1{1'b0}};
        fill <= {FIFO_AW+1{1'b0}};
        m_axis_tvalid <= 1'b0;
    end
end

endmodule

`resetall
