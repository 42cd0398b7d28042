import { Injectable } from '@nestjs/common';
import { DomainError, openEnvelope, parseWorkerPackage, type PackageDocument, type ParsedWorkerPackage } from '@packetagent/contracts';
import { PackageTrust } from '../trust/package-trust';

export interface SignatureVerdict {
  keyId: string;
  /** The key is one of the workspace's trusted publishers. */
  trusted: boolean;
  /** An admin acknowledged this package digest signed by this key. */
  acknowledged: boolean;
}

export interface CheckedPackage {
  parsed: ParsedWorkerPackage;
  signed: boolean;
  signatures: SignatureVerdict[];
  /** Null when the workspace accepts the package's signer; otherwise why not. */
  refusal: PublisherUntrustedError | PackageUnsignedError | null;
}

/** Every signature verifies, but none is by a trusted key or acknowledged for this digest. */
export class PublisherUntrustedError extends DomainError {
  readonly code = 'publisher_untrusted';
  constructor(readonly packageDigest: string, readonly keyIds: readonly string[]) {
    super(
      `the package ${packageDigest} is signed by ${keyIds.join(', ')}, which this workspace does not trust: ` +
        'an admin trusts the key (POST /api/v1/workspaces/{ws}/packetade/publishers) or acknowledges this package (POST .../packetade/acknowledgements)',
    );
  }
}

/** A workspace with trusted publishers accepts only signed packages. */
export class PackageUnsignedError extends DomainError {
  readonly code = 'package_unsigned';
  constructor(readonly packageDigest: string) {
    super(`the package ${packageDigest} is not signed, and this workspace has trusted publishers: send it as a DSSE envelope signed by one of them`);
  }
}

/**
 * Integrity and signer checks of a package document, against the workspace's trust. A broken
 * document or signature throws (a ValidationError naming the path); a sound package by a signer
 * the workspace does not accept is returned with its `refusal`, for validate to report and
 * deploy to throw.
 */
@Injectable()
export class PackageCheck {
  constructor(private readonly trust: PackageTrust) {}

  async check(workspaceId: string, document: PackageDocument): Promise<CheckedPackage> {
    const trustedKeys = await this.trust.trustedKeys(workspaceId);
    if (document.kind === 'package') {
      const parsed = parseWorkerPackage(document.value);
      return { parsed, signed: false, signatures: [], refusal: trustedKeys.length > 0 ? new PackageUnsignedError(parsed.digest) : null };
    }
    const opened = openEnvelope(document.envelope, trustedKeys);
    const parsed = parseWorkerPackage(opened.payload);
    const untrusted = opened.signatures.filter((signature) => !signature.trusted).map((signature) => signature.keyId);
    const acknowledged = await this.trust.acknowledgedKeys(workspaceId, parsed.digest, untrusted);
    const signatures = opened.signatures.map((signature) => ({ ...signature, acknowledged: acknowledged.has(signature.keyId) }));
    const accepted = signatures.some((signature) => signature.trusted || signature.acknowledged);
    return { parsed, signed: true, signatures, refusal: accepted ? null : new PublisherUntrustedError(parsed.digest, untrusted) };
  }
}
