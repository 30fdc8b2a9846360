// spi_flash_ctrl: an SPI NOR flash controller with a command interface
// (docs/firmware-update.md), for a W25Q/MX25-style part with 3-octet
// addresses (up to 16 MiB), SPI mode 0.
//
// Commands (cmd_op, flash_defs.vh), each one accepted when cmd_ready:
//   READ     fast read 0x0B (8 dummy clocks) of cmd_len octets from
//            cmd_addr, or with cmd_quad the quad output fast read 0x6B
//            (command and address on IO0, data on IO0..IO3)
//   PROGRAM  write enable 0x06, then page program 0x02 (quad: 0x32) of
//            cmd_len octets (1..256, within one page: the caller checks),
//            then status polls (0x05) until WIP clears
//   ERASE    write enable, 4 KiB sector erase 0x20 at cmd_addr, polls
//   STATUS   status register 1 (0x05): one octet
//   ID       JEDEC ID (0x9F): three octets
// The octets a command reads come out on rd_valid/rd_data, one a pulse, in
// order (no back-pressure: the consumer takes every one). The octets it
// programs are asked for by index: wr_idx (0..255) names the octet whose
// value wr_data must give in the same clock (a combinational read of the
// caller's buffer). done_valid pulses once when the command is over;
// done_timeout with it if WIP stayed set for POLL_MAX clocks.
//
// Pins: registered. SCK idles low; the controller changes IO on SCK's
// falling edge and samples on its rising edge (mode 0), SCK_DIV clocks a
// half period (SCK = clk / (2 SCK_DIV)). In single-line phases IO0 is the
// data out (DI), IO1 the data in (DO), IO2 and IO3 (WP#, HOLD#) are held
// high; in quad phases all four carry a nibble, high nibble first, IO3 the
// nibble's most significant bit. spi_io_oe says which lines the controller
// drives (a board's IOBUF or STARTUPE3 tristate; the simulated flash
// checks that it never drives a line the controller drives).
//
// Throughput: a quad read moves an octet every 2 SCK (4 clocks at SCK_DIV
// 1) after 40 SCK of command, address and dummy; a page program shifts its
// 256 octets in 512 SCK (quad) and then waits for the part (tPP).
`resetall
`timescale 1ns / 1ps
`default_nettype none
module spi_flash_ctrl #(
    parameter SCK_DIV  = 1,
    parameter CS_GAP   = 4,
    parameter POLL_MAX = 32'd400000000
) (
    input  wire        clk,
    input  wire        rst,

    input  wire        cmd_valid,
    output wire        cmd_ready,
    input  wire [2:0]  cmd_op,
    input  wire        cmd_quad,
    input  wire [23:0] cmd_addr,
    input  wire [23:0] cmd_len,
    output reg         done_valid,
    output reg         done_timeout,

    output reg         rd_valid,
    output reg  [7:0]  rd_data,
    output wire [7:0]  wr_idx,
    input  wire [7:0]  wr_data,

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
    if (SCK_DIV < 1 || SCK_DIV > 255) begin
        $error("spi_flash_ctrl: SCK_DIV must be 1 to 255, got %0d", SCK_DIV);
        $finish;
    end
    if (CS_GAP < 1 || CS_GAP > 255) begin
        $error("spi_flash_ctrl: CS_GAP must be 1 to 255, got %0d", CS_GAP);
        $finish;
    end
end

// SPI opcodes (the part's datasheet).
localparam [7:0] SPI_WREN   = 8'h06;
localparam [7:0] SPI_RDSR   = 8'h05;
localparam [7:0] SPI_READ   = 8'h0B;
localparam [7:0] SPI_QREAD  = 8'h6B;
localparam [7:0] SPI_PP     = 8'h02;
localparam [7:0] SPI_QPP    = 8'h32;
localparam [7:0] SPI_SE     = 8'h20;
localparam [7:0] SPI_RDID   = 8'h9F;

// Sequencer: a command is up to three transactions (CS# low to high).
localparam [2:0] SQ_IDLE = 3'd0, SQ_WREN = 3'd1, SQ_MAIN = 3'd2, SQ_POLL = 3'd3, SQ_GAP = 3'd4,
                 SQ_DONE = 3'd5;
// A transaction's phases.
localparam [1:0] PH_HDR = 2'd0, PH_DUMMY = 2'd1, PH_DATA = 2'd2;
// IO enables: single-line (IO1 is the part's), and quad in or out.
localparam [3:0] OE_SINGLE = 4'b1101, OE_QOUT = 4'b1111, OE_QIN = 4'b0000;

reg  [2:0]  sq_reg, sq_after_reg;   // state; SQ_GAP's next one
reg  [2:0]  op_reg;
reg         quad_reg;
reg  [23:0] addr_reg, len_reg;
reg  [7:0]  gap_reg;
reg         timeout_reg;

reg         x_on_reg;               // a transaction runs (CS# low)
reg         x_start;                // start one this clock (combinational below)
reg  [1:0]  x_ph_reg;
reg  [5:0]  x_cnt_reg;              // bits of the header, dummy cycles, or SCK of this octet left
reg  [23:0] x_len_reg;              // data octets left
reg         x_in_reg, x_quad_reg, x_poll_reg, x_data_reg;
reg  [3:0]  x_dummy_reg;
/* verilator lint_off UNUSEDSIGNAL */
reg  [31:0] sh_o_reg;               // what goes out, MSB first ([31] went out when loaded)
/* verilator lint_on UNUSEDSIGNAL */
reg  [7:0]  sh_i_reg;               // what came in
reg  [7:0]  div_reg;
reg  [7:0]  widx_reg;
reg  [31:0] poll_reg;               // clocks spent polling

reg         sck_reg, cs_n_reg;
reg  [3:0]  io_o_reg, io_oe_reg;

assign cmd_ready = sq_reg == SQ_IDLE;
assign wr_idx = widx_reg;
assign spi_sck = sck_reg;
assign spi_cs_n = cs_n_reg;
assign spi_io_o = io_o_reg;
assign spi_io_oe = io_oe_reg;

// The transaction a sequencer state starts: {header, header bits (8 or
// 32), dummy cycles, has data, data in, quad, poll}.
reg  [31:0] t_hdr;
reg  [5:0]  t_bits;
reg  [3:0]  t_dummy;
reg         t_data, t_in, t_quad, t_poll;
reg  [2:0]  t_state;                // the sequencer state it belongs to
always @(*) begin
    t_hdr = {SPI_WREN, 24'd0};
    t_bits = 6'd8;
    t_dummy = 4'd0;
    t_data = 1'b0;
    t_in = 1'b0;
    t_quad = 1'b0;
    t_poll = 1'b0;
    t_state = SQ_WREN;
    x_start = 1'b0;
    if (sq_reg == SQ_IDLE && cmd_valid) begin
        x_start = 1'b1;
        case (cmd_op)
        FOP_READ: begin
            t_state = SQ_MAIN;
            t_hdr = {cmd_quad ? SPI_QREAD : SPI_READ, cmd_addr};
            t_bits = 6'd32;
            t_dummy = 4'd8;
            t_data = 1'b1;
            t_in = 1'b1;
            t_quad = cmd_quad;
        end
        FOP_STATUS: begin
            t_state = SQ_MAIN;
            t_hdr = {SPI_RDSR, 24'd0};
            t_data = 1'b1;
            t_in = 1'b1;
        end
        FOP_ID: begin
            t_state = SQ_MAIN;
            t_hdr = {SPI_RDID, 24'd0};
            t_data = 1'b1;
            t_in = 1'b1;
        end
        FOP_PROGRAM, FOP_ERASE: ;  // write enable first
        default: x_start = 1'b0;   // not a command: done at once (bad_op below)
        endcase
    end else if (sq_reg == SQ_GAP && gap_reg == 8'd0 && (sq_after_reg == SQ_MAIN || sq_after_reg == SQ_POLL)) begin
        x_start = 1'b1;
        t_state = sq_after_reg;
        if (sq_after_reg == SQ_POLL) begin
            t_hdr = {SPI_RDSR, 24'd0};
            t_data = 1'b1;
            t_in = 1'b1;
            t_poll = 1'b1;
        end else begin
            t_bits = 6'd32;
            t_hdr = {op_reg == FOP_ERASE ? SPI_SE : (quad_reg ? SPI_QPP : SPI_PP), addr_reg};
            t_data = op_reg == FOP_PROGRAM;
            t_quad = quad_reg;
        end
    end
end

// The lines an octet's first bit or nibble drives.
/* verilator lint_off UNUSEDSIGNAL */
function [3:0] lines(input [7:0] v, input quad);   // v[3:0] goes out on the next edge
    lines = quad ? v[7:4] : {3'b110, v[7]};
endfunction
/* verilator lint_on UNUSEDSIGNAL */

// Whether the transaction goes on past this falling edge (the case above
// ends it by clearing x_on_reg; this says so in the same clock, for CS#).
reg x_on_next;
always @(*) begin
    x_on_next = 1'b1;
    case (x_ph_reg)
    PH_HDR: x_on_next = x_cnt_reg != 6'd1 || x_dummy_reg != 4'd0 || x_data_reg;
    PH_DUMMY: x_on_next = 1'b1;
    default: x_on_next = x_cnt_reg != 6'd1 ||
                         !(x_poll_reg ? (!sh_i_reg[0] || poll_reg >= POLL_MAX) : x_len_reg == 24'd1);
    endcase
end

wire bad_op = sq_reg == SQ_IDLE && cmd_valid && !x_start;
wire half = div_reg == SCK_DIV[7:0] - 8'd1;
wire [7:0] sh_i_next = x_quad_reg ? {sh_i_reg[3:0], spi_io_i} : {sh_i_reg[6:0], spi_io_i[1]};
wire [5:0] octet_sck = x_quad_reg ? 6'd2 : 6'd8;

always @(posedge clk) begin
    done_valid <= 1'b0;
    rd_valid <= 1'b0;
    if (sq_reg == SQ_GAP && gap_reg != 8'd0) gap_reg <= gap_reg - 8'd1;
    if (x_start) begin
        sq_reg <= t_state;
        if (sq_reg == SQ_IDLE) begin
            op_reg <= cmd_op;
            quad_reg <= cmd_quad;
            addr_reg <= cmd_addr;
            len_reg <= cmd_len;
            timeout_reg <= 1'b0;
        end
        x_on_reg <= 1'b1;
        x_ph_reg <= PH_HDR;
        x_cnt_reg <= t_bits;
        x_len_reg <= t_state == SQ_MAIN ? (sq_reg == SQ_IDLE ? cmd_len : len_reg) : 24'd1;
        x_in_reg <= t_in;
        x_quad_reg <= t_quad;
        x_poll_reg <= t_poll;
        x_data_reg <= t_data;
        x_dummy_reg <= t_dummy;
        sh_o_reg <= t_bits == 6'd8 ? {t_hdr[31:24], 24'd0} : t_hdr;
        widx_reg <= 8'd0;
        poll_reg <= 32'd0;
        div_reg <= 8'd0;
        sck_reg <= 1'b0;
        cs_n_reg <= 1'b0;
        io_oe_reg <= OE_SINGLE;
        io_o_reg <= {3'b110, t_hdr[31]};
    end else if (bad_op) begin
        sq_reg <= SQ_DONE;
        timeout_reg <= 1'b0;
    end
    if (sq_reg == SQ_DONE) begin
        done_valid <= 1'b1;
        done_timeout <= timeout_reg;
        sq_reg <= SQ_IDLE;
    end
    if (x_on_reg && !x_start) begin
        if (x_poll_reg) poll_reg <= poll_reg + 32'd1;
        div_reg <= half ? 8'd0 : div_reg + 8'd1;
        if (half && !sck_reg) begin
            // Rising edge: the part samples what we drive; we sample it.
            sck_reg <= 1'b1;
            if (x_ph_reg == PH_DATA && x_in_reg) sh_i_reg <= sh_i_next;
        end else if (half) begin
            // Falling edge: an SCK cycle is over; drive the next bit.
            sck_reg <= 1'b0;
            case (x_ph_reg)
            PH_HDR: begin
                if (x_cnt_reg != 6'd1) begin
                    x_cnt_reg <= x_cnt_reg - 6'd1;
                    sh_o_reg <= {sh_o_reg[30:0], 1'b0};
                    io_o_reg <= {3'b110, sh_o_reg[30]};
                end else if (x_dummy_reg != 4'd0) begin
                    x_ph_reg <= PH_DUMMY;
                    x_cnt_reg <= {2'd0, x_dummy_reg};
                    if (x_quad_reg) io_oe_reg <= OE_QIN;   // the part drives all four after the dummies
                end else if (x_data_reg) begin
                    x_ph_reg <= PH_DATA;
                    x_cnt_reg <= octet_sck;
                    if (!x_in_reg) begin
                        sh_o_reg <= {wr_data, 24'd0};
                        widx_reg <= widx_reg + 8'd1;
                        io_o_reg <= lines(wr_data, x_quad_reg);
                        io_oe_reg <= x_quad_reg ? OE_QOUT : OE_SINGLE;
                    end else begin
                        io_oe_reg <= x_quad_reg ? OE_QIN : OE_SINGLE;
                    end
                end else begin
                    x_on_reg <= 1'b0;
                end
            end
            PH_DUMMY: begin
                if (x_cnt_reg != 6'd1) begin
                    x_cnt_reg <= x_cnt_reg - 6'd1;
                end else begin
                    x_ph_reg <= PH_DATA;
                    x_cnt_reg <= octet_sck;
                end
            end
            default: begin  // PH_DATA
                if (x_cnt_reg != 6'd1) begin
                    x_cnt_reg <= x_cnt_reg - 6'd1;
                    if (!x_in_reg) begin
                        sh_o_reg <= x_quad_reg ? {sh_o_reg[27:0], 4'd0} : {sh_o_reg[30:0], 1'b0};
                        io_o_reg <= x_quad_reg ? sh_o_reg[27:24] : {3'b110, sh_o_reg[30]};
                    end
                end else begin
                    if (x_in_reg) begin
                        rd_valid <= !x_poll_reg;
                        rd_data <= sh_i_reg;
                    end
                    if (x_poll_reg ? (!sh_i_reg[0] || poll_reg >= POLL_MAX) : x_len_reg == 24'd1) begin
                        x_on_reg <= 1'b0;
                        if (x_poll_reg && sh_i_reg[0]) timeout_reg <= 1'b1;
                    end else begin
                        x_len_reg <= x_len_reg - (x_poll_reg ? 24'd0 : 24'd1);
                        x_cnt_reg <= octet_sck;
                        if (!x_in_reg) begin
                            sh_o_reg <= {wr_data, 24'd0};
                            widx_reg <= widx_reg + 8'd1;
                            io_o_reg <= lines(wr_data, x_quad_reg);
                        end
                    end
                end
            end
            endcase
        end
    end
    // A transaction's end: CS# high, the lines back to single-line idle,
    // then CS_GAP clocks (tSHSL) before the next one.
    if (x_on_reg && !x_start && half && sck_reg && !x_on_next) begin
        cs_n_reg <= 1'b1;
        io_oe_reg <= OE_SINGLE;
        io_o_reg <= 4'b1100;
        sq_reg <= SQ_GAP;
        gap_reg <= CS_GAP[7:0] - 8'd1;
        case (sq_reg)
        SQ_WREN: sq_after_reg <= SQ_MAIN;
        SQ_MAIN: sq_after_reg <= (op_reg == FOP_PROGRAM || op_reg == FOP_ERASE) ? SQ_POLL : SQ_DONE;
        default: sq_after_reg <= SQ_DONE;
        endcase
    end
    if (sq_reg == SQ_GAP && gap_reg == 8'd0 && !(sq_after_reg == SQ_MAIN || sq_after_reg == SQ_POLL))
        sq_reg <= SQ_DONE;
    if (rst) begin
        sq_reg <= SQ_IDLE;
        x_on_reg <= 1'b0;
        sck_reg <= 1'b0;
        cs_n_reg <= 1'b1;
        io_oe_reg <= OE_SINGLE;
        io_o_reg <= 4'b1100;
        done_valid <= 1'b0;
        done_timeout <= 1'b0;
        rd_valid <= 1'b0;
    end
end

endmodule

`resetall
