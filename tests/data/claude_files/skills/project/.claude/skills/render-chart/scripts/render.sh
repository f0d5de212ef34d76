#!/bin/sh
echo "rendered $1"
