// rnic_flash: the configuration flash block of the device (the flash block
// of hw/regs/rnic.rdl; docs/firmware-update.md): the host's command window
// (CMD, ADDR, LEN, the 256-octet DATA buffer, STATUS), the boot logic
// (flash_boot) and the SPI controller (spi_flash_ctrl) they share.
//
// The boot logic runs at reset and at a BOOT_CTRL write of the key "BOOT"
// (accepted only while no host command runs); while it runs it owns the
// controller and the host is locked out (STATUS.BUSY and .BOOT; CMD writes
// are ignored). A host command is checked before it reaches the flash:
// BAD_OP (not 1..5), BAD_ARG (LEN 0 or over 256; a PROGRAM that crosses a
// page; an ERASE not sector-aligned; a READ past the part's end; QUAD on a
// build without it or on another command), PROTECTED (an ERASE or PROGRAM
// below PROTECT, the golden slot: the flash is never touched); otherwise
// the controller runs it and CODE is OK or TIMEOUT.
//
// Latency: a command's BAR write to the controller's first SCK, 2 clocks;
// the rest is the flash's (spi_flash_ctrl).
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_flash #(
    parameter SIZE_LOG2 = 24,     // the part: 16 MiB (3-octet addresses)
    parameter SLOT_LOG2 = 22,     // golden, A, B: 4 MiB each
    parameter TRIALS    = 1,      // trial boots of an unconfirmed slot
    parameter QUAD      = 1,      // the part does 0x6B and 0x32
    parameter SCK_DIV   = 1,
    parameter POLL_MAX  = 32'd400000000
) (
    input  wire        clk,
    input  wire        rst,

    // CMD (external register): a write is a command.
    input  wire        cmd_req,
    input  wire        cmd_is_wr,
    input  wire [31:0] cmd_wr_data,
    output wire        cmd_rd_ack,
    output wire        cmd_wr_ack,
    output wire [31:0] cmd_rd_data,
    input  wire [23:0] addr,
    input  wire [8:0]  len,
    output wire        st_busy,
    output wire        st_boot,
    output reg  [7:0]  st_code,
    // DATA (external region): 64 words.
    input  wire        data_req,
    input  wire [7:0]  data_addr,
    input  wire        data_is_wr,
    input  wire [31:0] data_wr_data,
    input  wire [31:0] data_wr_biten,
    output reg         data_rd_ack,
    output reg  [31:0] data_rd_data,
    output reg         data_wr_ack,
    // BOOT_CTRL (external register).
    input  wire        bctl_req,
    input  wire        bctl_is_wr,
    input  wire [31:0] bctl_wr_data,
    output wire        bctl_rd_ack,
    output wire        bctl_wr_ack,
    // The boot logic's report.
    output wire        boot_done,
    output wire [1:0]  boot_slot,
    output wire [3:0]  boot_reason,
    output wire [2:0]  boot_valid,
    output wire [2:0]  boot_present,
    output wire [2:0]  boot_confirmed,
    output wire [2:0]  boot_tried,
    output wire [31:0] boot_version,
    output wire [31:0] boot_security,
    output wire [31:0] boot_build,
    output wire [31:0] boot_seq,
    output wire [31:0] boot_addr,
    output wire [31:0] protect,

    output wire        spi_sck,
    output wire        spi_cs_n,
    output wire [3:0]  spi_io_o,
    output wire [3:0]  spi_io_oe,
    input  wire [3:0]  spi_io_i
);
/* verilator lint_off UNUSEDPARAM */
`include "flash_defs.vh"
/* verilator lint_on UNUSEDPARAM */

initial begin
    if (SIZE_LOG2 < 16 || SIZE_LOG2 > 24 || SLOT_LOG2 + 2 > SIZE_LOG2) begin
        $error("rnic_flash: SIZE_LOG2 must be 16 to 24 (3-octet addresses) with room for three slots of 2^SLOT_LOG2, got %0d, %0d",
               SIZE_LOG2, SLOT_LOG2);
        $finish;
    end
end

localparam [31:0] BOOT_KEY = 32'h424F4F54;   // "BOOT"
localparam [24:0] SIZE = 25'd1 << SIZE_LOG2;
assign protect = 32'd1 << SLOT_LOG2;         // the golden slot

// The controller and who drives it.
wire        c_ready, c_done, c_timeout, c_rd_valid;
wire [7:0]  c_rd_data, c_wr_idx;
wire        b_busy, b_valid, b_quad;
wire [2:0]  b_op;
wire [23:0] b_addr, b_len;
reg         h_valid_reg, h_run_reg, h_quad_reg;
reg  [2:0]  h_op_reg;
reg  [23:0] h_addr_reg, h_len_reg;
reg  [8:0]  h_last_reg;                      // CMD's read-back
reg  [7:0]  rd_idx_reg;                      // where a READ's next octet goes
reg         boot_start_reg;
// The buffer, one array a lane so that the controller writes octets.
reg  [7:0]  lane0 [0:63];
reg  [7:0]  lane1 [0:63];
reg  [7:0]  lane2 [0:63];
reg  [7:0]  lane3 [0:63];
reg  [7:0]  buf_octet;

always @(*) begin
    case (c_wr_idx[1:0])
    2'd0: buf_octet = lane0[c_wr_idx[7:2]];
    2'd1: buf_octet = lane1[c_wr_idx[7:2]];
    2'd2: buf_octet = lane2[c_wr_idx[7:2]];
    default: buf_octet = lane3[c_wr_idx[7:2]];
    endcase
end

spi_flash_ctrl #(.SCK_DIV(SCK_DIV), .POLL_MAX(POLL_MAX)) ctrl (
    .clk(clk), .rst(rst),
    .cmd_valid(b_busy ? b_valid : h_valid_reg), .cmd_ready(c_ready),
    .cmd_op(b_busy ? b_op : h_op_reg), .cmd_quad(b_busy ? b_quad : h_quad_reg),
    .cmd_addr(b_busy ? b_addr : h_addr_reg), .cmd_len(b_busy ? b_len : h_len_reg),
    .done_valid(c_done), .done_timeout(c_timeout),
    .rd_valid(c_rd_valid), .rd_data(c_rd_data),
    .wr_idx(c_wr_idx), .wr_data(b_busy ? 8'h00 : buf_octet),
    .spi_sck(spi_sck), .spi_cs_n(spi_cs_n), .spi_io_o(spi_io_o), .spi_io_oe(spi_io_oe), .spi_io_i(spi_io_i)
);

flash_boot #(.SLOT_LOG2(SLOT_LOG2), .TRIALS(TRIALS), .QUAD(QUAD)) boot (
    .clk(clk), .rst(rst), .start(boot_start_reg), .busy(b_busy),
    .c_valid(b_valid), .c_ready(c_ready), .c_op(b_op), .c_quad(b_quad), .c_addr(b_addr), .c_len(b_len),
    .c_done(c_done), .c_rd_valid(c_rd_valid), .c_rd_data(c_rd_data),
    .res_done(boot_done), .res_slot(boot_slot), .res_reason(boot_reason), .res_valid(boot_valid),
    .res_present(boot_present), .res_confirmed(boot_confirmed), .res_tried(boot_tried),
    .res_version(boot_version), .res_security(boot_security), .res_build(boot_build), .res_seq(boot_seq),
    .res_addr(boot_addr)
);

assign st_boot = b_busy || boot_start_reg;
assign st_busy = st_boot || h_run_reg;
assign cmd_rd_ack = cmd_req && !cmd_is_wr;
assign cmd_wr_ack = cmd_req && cmd_is_wr;
assign cmd_rd_data = {23'd0, h_last_reg};
assign bctl_rd_ack = bctl_req && !bctl_is_wr;
assign bctl_wr_ack = bctl_req && bctl_is_wr;

// A host command's checks (see the header), in order.
wire [7:0]  w_op = cmd_wr_data[7:0];
wire        w_quad = cmd_wr_data[8];
wire        op_known = w_op >= 8'd1 && w_op <= 8'd5;
wire        op_rw = w_op == {5'd0, FOP_READ} || w_op == {5'd0, FOP_PROGRAM};
wire        op_wr = w_op == {5'd0, FOP_PROGRAM} || w_op == {5'd0, FOP_ERASE};
wire [9:0]  page_end = {2'd0, addr[7:0]} + {1'd0, len};
wire [24:0] read_end = {1'd0, addr} + {16'd0, len};
wire        bad_arg = (w_quad && (QUAD == 0 || !op_rw)) ||
                      (op_rw && (len == 9'd0 || len > 9'd256)) ||
                      (w_op == {5'd0, FOP_PROGRAM} && page_end > 10'd256) ||
                      (w_op == {5'd0, FOP_ERASE} && addr[11:0] != 12'd0) ||
                      (w_op == {5'd0, FOP_READ} && read_end > SIZE);
wire        protected_hit = op_wr && {8'd0, addr} < protect;
wire        take = cmd_req && cmd_is_wr && !st_busy;

always @(posedge clk) begin
    boot_start_reg <= 1'b0;
    if (bctl_req && bctl_is_wr && bctl_wr_data == BOOT_KEY && !st_busy) boot_start_reg <= 1'b1;
    if (h_valid_reg && c_ready && !b_busy) h_valid_reg <= 1'b0;
    if (take) begin
        h_last_reg <= cmd_wr_data[8:0];
        h_op_reg <= w_op[2:0];
        h_quad_reg <= w_quad;
        h_addr_reg <= addr;
        h_len_reg <= {15'd0, len};
        rd_idx_reg <= 8'd0;
        if (!op_known) st_code <= FCODE_BAD_OP;
        else if (bad_arg) st_code <= FCODE_BAD_ARG;
        else if (protected_hit) st_code <= FCODE_PROTECTED;
        else begin
            st_code <= FCODE_OK;
            h_valid_reg <= 1'b1;
            h_run_reg <= 1'b1;
        end
    end
    if (h_run_reg && c_done) begin
        h_run_reg <= 1'b0;
        if (c_timeout) st_code <= FCODE_TIMEOUT;
    end
    if (h_run_reg && c_rd_valid) rd_idx_reg <= rd_idx_reg + 8'd1;
    if (rst) begin
        h_valid_reg <= 1'b0;
        h_run_reg <= 1'b0;
        h_last_reg <= 9'd0;
        st_code <= FCODE_OK;
        boot_start_reg <= 1'b0;
    end
end

// The buffer: a READ's octets from the controller, the host's words
// otherwise (a host write while a READ fills it loses to the READ).
wire        ctl_wr = h_run_reg && c_rd_valid;
wire        host_wr = data_req && data_is_wr;
always @(posedge clk) begin
    if (ctl_wr) begin
        case (rd_idx_reg[1:0])
        2'd0: lane0[rd_idx_reg[7:2]] <= c_rd_data;
        2'd1: lane1[rd_idx_reg[7:2]] <= c_rd_data;
        2'd2: lane2[rd_idx_reg[7:2]] <= c_rd_data;
        default: lane3[rd_idx_reg[7:2]] <= c_rd_data;
        endcase
    end else if (host_wr) begin
        if (data_wr_biten[7]) lane0[data_addr[7:2]] <= data_wr_data[7:0];
        if (data_wr_biten[15]) lane1[data_addr[7:2]] <= data_wr_data[15:8];
        if (data_wr_biten[23]) lane2[data_addr[7:2]] <= data_wr_data[23:16];
        if (data_wr_biten[31]) lane3[data_addr[7:2]] <= data_wr_data[31:24];
    end
end
always @(posedge clk) begin
    data_rd_ack <= data_req && !data_is_wr;
    data_wr_ack <= host_wr;
    data_rd_data <= {lane3[data_addr[7:2]], lane2[data_addr[7:2]], lane1[data_addr[7:2]], lane0[data_addr[7:2]]};
    if (rst) begin
        data_rd_ack <= 1'b0;
        data_wr_ack <= 1'b0;
    end
end

/* verilator lint_off UNUSEDSIGNAL */
wire unused = &{1'b0, data_addr[1:0], cmd_wr_data[31:9], data_wr_biten[6:0], data_wr_biten[14:8], data_wr_biten[22:16], data_wr_biten[30:24]};
/* verilator lint_on UNUSEDSIGNAL */

endmodule

`resetall
