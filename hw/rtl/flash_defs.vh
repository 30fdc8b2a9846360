// flash_defs.vh: the codes the configuration flash blocks share
// (spi_flash_ctrl, flash_boot, rnic_flash; docs/firmware-update.md), named
// once. Included inside a module body.

// spi_flash_ctrl's commands (also the host's CMD opcodes, rnic.rdl).
localparam [2:0] FOP_READ    = 3'd1;  // LEN octets from ADDR (0x0B, quad 0x6B)
localparam [2:0] FOP_PROGRAM = 3'd2;  // write enable, page program (0x02, quad 0x32), busy poll
localparam [2:0] FOP_ERASE   = 3'd3;  // write enable, 4 KiB sector erase (0x20), busy poll
localparam [2:0] FOP_STATUS  = 3'd4;  // read status register 1 (0x05): one octet
localparam [2:0] FOP_ID      = 3'd5;  // JEDEC ID (0x9F): three octets

// STATUS.CODE of a host command.
localparam [7:0] FCODE_OK        = 8'd0;
localparam [7:0] FCODE_BAD_OP    = 8'd1;
localparam [7:0] FCODE_BAD_ARG   = 8'd2;
localparam [7:0] FCODE_PROTECTED = 8'd3;
localparam [7:0] FCODE_TIMEOUT   = 8'd4;

// BOOT_STATUS.SLOT and .REASON.
localparam [1:0] FSLOT_GOLDEN = 2'd0;
localparam [1:0] FSLOT_A      = 2'd1;
localparam [1:0] FSLOT_B      = 2'd2;
localparam [1:0] FSLOT_NONE   = 2'd3;
localparam [3:0] FWHY_NONE        = 4'd0;  // the boot logic has not run
localparam [3:0] FWHY_CONFIRMED   = 4'd1;  // the newest valid slot, confirmed
localparam [3:0] FWHY_TRIAL       = 4'd2;  // the newest valid slot's trial boot
localparam [3:0] FWHY_UNCONFIRMED = 4'd3;  // fallback: the newest slot's trial was not confirmed
localparam [3:0] FWHY_INVALID     = 4'd4;  // fallback: the other update slot is present but invalid
localparam [3:0] FWHY_GOLDEN      = 4'd5;  // golden: no update slot is valid
localparam [3:0] FWHY_NOTHING     = 4'd6;  // no valid image at all

// The slot layout within a slot's header sector (docs/firmware-update.md).
localparam [23:0] FHS_MARKER  = 24'h000200;  // commit marker, 20 octets
localparam [23:0] FHS_CONFIRM = 24'h000220;  // confirm octet: 0x00 = confirmed
localparam [23:0] FHS_TRIALS  = 24'h000240;  // trial attempt octets: not 0xFF = used
localparam [23:0] FHS_PAYLOAD = 24'h001000;  // the payload starts in the next sector
