import sys
TILE_WIDTH = 16
sys.exit(0)
